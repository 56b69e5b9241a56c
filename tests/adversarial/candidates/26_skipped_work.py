# expect: failed values
# Computes eight rows and repeats them: most of the work skipped.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        head = torch.relu(self.lin(x[:8])) * 2.0
        return head.repeat((x.shape[0] + 7) // 8, 1)[:x.shape[0]]
