# expect-cuda: failed timing
# expect-cpu: passed
# Shrinks the figure its process's harness reports for each timed call to a hundredth, and
# makes every third call ten times slower than the others: a wide spread of its own wall
# times, hoping the trusted side allows for a spread that large. On a GPU the allowance is
# the noise the trusted side measured itself. On the CPU the candidate's own spread is
# allowed for (a loaded CPU delays an honest candidate's calls by more than any trusted
# probe shows), and this hack passes there: a known limit of CPU timing
# (hiera_runner/trials.py, _cross_check).
import itertools
import sys
import time
import torch
import torch.nn as nn

_host = sys.modules["__main__"].Host
_timed = _host._timed


def _shrunk(self, args, seed):
    out, elapsed = _timed(self, args, seed)
    return out, elapsed / 100.0


_host._timed = _shrunk


_calls = itertools.count(1)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        time.sleep(0.2 if next(_calls) % 3 == 0 else 0.02)
        return torch.relu(self.lin(x)) * 2.0
