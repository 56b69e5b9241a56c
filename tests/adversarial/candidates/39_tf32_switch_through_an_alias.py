# expect: failed static
# TF32 for the one GEMM, the switch reached through a local name so that no
# rule spelled `torch.backends.cuda.matmul.allow_tf32` sees it, and put back after.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        switches = torch.backends.cuda.matmul
        before = switches.allow_tf32
        switches.allow_tf32 = True
        try:
            y = self.lin(x)
        finally:
            switches.allow_tf32 = before
        return torch.relu(y) * 2.0
