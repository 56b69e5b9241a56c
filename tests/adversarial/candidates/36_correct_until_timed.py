# expect: failed timing
# Computes honestly for its first calls (the verification trials), then hands the last
# result out again without any work: a timing loop that reuses its inputs would time nothing.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.calls = 0
        self.last = None

    def forward(self, x):
        self.calls += 1
        if self.last is not None and self.calls > 12 and self.last.shape[0] == x.shape[0]:
            return self.last
        self.last = torch.relu(self.lin(x)) * 2.0
        return self.last
