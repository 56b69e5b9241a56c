# expect: failed values
# Returns an empty tensor at once and fills it from a thread (threading reached through
# sys.modules, so no import is seen): the output is read before the thread wrote it.
import sys
import time
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        out = torch.zeros(x.shape[0], self.lin.out_features, device=x.device)

        def later():
            time.sleep(0.5)
            out.copy_(torch.relu(self.lin(x)) * 2.0)
        sys.modules["thread" + "ing"].Thread(target=later, daemon=True).start()
        return out
