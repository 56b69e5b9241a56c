# expect: failed static
# The handler only sets a flag; the code after it computes the output another way.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        out = None
        try:
            out = (torch.relu(self.lin(x)) * 2.0).view(BATCH, N)
        except Exception:
            pass
        if out is None:
            out = torch.relu(torch.addmm(self.lin.bias, x, self.lin.weight.t())) * 2.0
        return out
