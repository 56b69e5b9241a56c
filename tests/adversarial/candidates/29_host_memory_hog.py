# expect: failed runtime
# Takes far more host memory than its limit (the suite sets it to 1 GiB).
import time
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        hog = bytearray(b"\x01") * (3 << 30)
        time.sleep(5)
        return torch.relu(self.lin(x)) * 2.0 + len(hog) * 0
