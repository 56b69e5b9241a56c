# expect: failed static
# A fast path that only works at the benchmark's shape, and an except that recomputes
# the reference's math inline when it fails.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        try:
            return (torch.relu(self.lin(x)) * 2.0).view(BATCH, N)
        except RuntimeError:
            y = x @ self.lin.weight.t() + self.lin.bias
            return y.clamp_min(0) * 2.0
