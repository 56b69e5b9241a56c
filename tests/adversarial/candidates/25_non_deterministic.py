# expect: failed determinism
# Adds noise below the tolerance that changes from call to call.
import time
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return torch.relu(self.lin(x)) * 2.0 + 1e-7 * (self.calls % 3)
