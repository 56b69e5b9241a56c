# expect: passed
# The same computation rewritten (addmm, clamp, one intermediate fewer): the control that must pass.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        return torch.addmm(self.lin.bias, x, self.lin.weight.t()).clamp_min(0.0).mul(2.0)
