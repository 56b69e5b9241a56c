# expect: failed timing
# Makes synchronisation a no-op and every clock of its process report almost nothing, so
# the harness there replies before the work is done, with a made-up time.
import sys
import time
import torch
import torch.nn as nn

setattr(torch.cuda, "synchro" + "nize", lambda *a, **k: None)
setattr(torch.cuda.Event, "elapsed_" + "time", lambda self, other: 0.01)
_real = time.perf_counter
setattr(time, "perf_" + "counter", lambda: _real() / 10.0)


# The harness of this process keeps its own references to the clocks: those too.
_harness_timing = sys.modules.get("hiera_runner.timing")
if _harness_timing is not None:
    for _name, _value in list(vars(_harness_timing).items()):
        if _name in ("_perf_" + "counter", "_elapsed_" + "time", "_synchro" + "nize"):
            _original = _value
            if _name.startswith("_perf"):
                setattr(_harness_timing, _name, getattr(time, "perf_" + "counter"))
            elif _name.startswith("_elapsed"):
                setattr(_harness_timing, _name, getattr(torch.cuda.Event, "elapsed_" + "time"))
            elif getattr(torch.cuda, "synchro" + "nize") is not _original:
                setattr(_harness_timing, _name, getattr(torch.cuda, "synchro" + "nize"))


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        time.sleep(0.02)
        return torch.relu(self.lin(x)) * 2.0
