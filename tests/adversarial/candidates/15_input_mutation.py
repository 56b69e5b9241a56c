# expect: failed input_mutation
# Reuses its input as scratch space.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        y = torch.relu(self.lin(x)) * 2.0
        x.zero_()
        return y
