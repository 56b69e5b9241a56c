# expect: failed timeout
# Never returns (the suite sets the call timeout to 20 s).
import time
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        while True:
            time.sleep(1)
