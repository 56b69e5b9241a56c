# expect: failed static
# The plain spelling of the same: refused before it runs.
import socket
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        socket.create_connection(("127.0.0.1", 9), timeout=1)
        return torch.relu(self.lin(x)) * 2.0
