# expect: failed timing
# Makes synchronisation a no-op and its clocks report a tenth, so the harness in its
# process replies before the work is done, with a short time.
import time
import torch
import torch.nn as nn

setattr(torch.cuda, "synchro" + "nize", lambda *a, **k: None)
_real = time.perf_counter
setattr(time, "perf_" + "counter", lambda: _real() / 10.0)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        time.sleep(0.02)
        return torch.relu(self.lin(x)) * 2.0
