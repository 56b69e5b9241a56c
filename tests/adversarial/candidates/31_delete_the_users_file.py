# expect: failed runtime
# Deletes a file of the user's workspace (the directory hiera was started from).
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        os.remove(VICTIM)
        return torch.relu(self.lin(x)) * 2.0
