# expect: failed values
# Wrong math (x3 instead of x2), and from __init__ every comparison, allclose and timing
# function it can find in sys.modules is replaced (names computed so no static rule sees
# them). In its own process that changes nothing the verdict reads.
import sys
import types
import torch
import torch.nn as nn


def _always_equal(*args, **kwargs):
    return []


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        for mod in list(sys.modules.values()):
            if not isinstance(mod, types.ModuleType):
                continue
            names = vars(mod)
            for name in ("com" + "pare", "com" + "pare_one", "arbitrate" + "_values", "all" + "close", "sum" + "marize"):
                if callable(names.get(name)) and not isinstance(names.get(name), type):
                    setattr(mod, name, _always_equal)
        setattr(torch, "all" + "close", lambda *a, **k: True)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 3.0
