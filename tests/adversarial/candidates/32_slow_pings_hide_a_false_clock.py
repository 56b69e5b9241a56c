# expect: failed timing
# Reports a hundredth of its time, and slows its process's answers to the exchange's
# round-trip probe by as much, hoping the trusted side subtracts that from the wall time.
# The harness's own gap was measured before this code was loaded.
import sys
import time
import torch
import torch.nn as nn

_real = time.perf_counter
_start = _real()
setattr(time, "perf_" + "counter", lambda: _start + (_real() - _start) / 100.0)
if torch.cuda.is_available():
    _elapsed = torch.cuda.Event.elapsed_time
    setattr(torch.cuda.Event, "elapsed_" + "time", lambda self, other: _elapsed(self, other) / 100.0)
_host = sys.modules["__main__"].Host  # the harness of this process
_ping = _host.op_ping


def _slow_ping(self, message, fds):
    time.sleep(0.03)
    return _ping(self, message, fds)


setattr(_host, "op_" + "ping", _slow_ping)


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
        time.sleep(0.03)
        return torch.relu(self.lin(x)) * 2.0
