# expect: failed runtime
# Ends its process in the middle of a call (as a crash or a sys.exit in a library would).
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        os._exit(0)
