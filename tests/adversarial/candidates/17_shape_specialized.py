# expect: failed shape_generality
# Hard-codes the benchmark's shape, as LLM candidates often do.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        flat = (torch.relu(self.lin(x)) * 2.0).reshape(-1)
        return flat.view(BATCH, N)
