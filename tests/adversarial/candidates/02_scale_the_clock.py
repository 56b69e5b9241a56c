# expect: failed timing
# Correct but slow (it sleeps), and every clock of its own process reports a hundredth of
# the time: the trusted side's wall clock across the process boundary disagrees.
import sys
import time
import torch
import torch.nn as nn

_real = time.perf_counter
_start = _real()


def _slow_clock():
    return _start + (_real() - _start) / 100.0


setattr(time, "perf_" + "counter", _slow_clock)
if torch.cuda.is_available():
    _elapsed = torch.cuda.Event.elapsed_time
    setattr(torch.cuda.Event, "elapsed_" + "time", lambda self, other: _elapsed(self, other) / 100.0)


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
