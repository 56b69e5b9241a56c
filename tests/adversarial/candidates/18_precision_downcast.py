# expect: failed static
# Runs the matmul in float16 without the contract allowing it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        y = torch.nn.functional.linear(x.half(), self.lin.weight.half(), self.lin.bias.half())
        return (torch.relu(y) * 2.0).float()
