# expect: failed values
# Computes once per input address and hands the cached result out again: the trusted
# side writes fresh inputs into the same buffer every trial.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.cache = {}

    def forward(self, x):
        key = x.data_ptr()
        if key not in self.cache:
            self.cache[key] = torch.relu(self.lin(x)) * 2.0
        return self.cache[key]
