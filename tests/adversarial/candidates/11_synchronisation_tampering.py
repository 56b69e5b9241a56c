# expect: failed timing
# Makes synchronisation a no-op and every clock of its process report almost nothing, so
# the harness there replies before the work is done, with a made-up time.
import time
import torch
import torch.nn as nn

setattr(torch.cuda, "synchro" + "nize", lambda *a, **k: None)
setattr(torch.cuda.Event, "elapsed_" + "time", lambda self, other: 0.01)
_real = time.perf_counter
setattr(time, "perf_" + "counter", lambda: _real() / 10.0)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        time.sleep(0.02)
        return torch.relu(self.lin(x)) * 2.0
