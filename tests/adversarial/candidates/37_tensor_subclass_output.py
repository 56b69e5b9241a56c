# expect: failed values
# Returns a tensor subclass whose comparisons always agree (every torch function on it answers
# "equal"), holding a cheap wrong value: a judge that compared it in the candidate's own
# process, or trusted what the object says, would pass it.
import torch
import torch.nn as nn


class AlwaysClose(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("allclose", "equal", "isclose", "eq", "__eq__"):
            return True if name in ("allclose", "equal") else torch.ones((), dtype=torch.bool)
        return super().__torch_function__(func, types, args, kwargs or {})


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        return torch.zeros(x.shape[0], self.lin.out_features, dtype=x.dtype, device=x.device).as_subclass(AlwaysClose)
