"""Trial inputs: seeds, distributions, moving and cloning input lists.

get_inputs() decides shapes, dtypes and integer contents under the trial's
seed; every floating tensor is then redrawn from the trial's distribution so
that candidates also meet negatives and large magnitudes, not only [0, 1).
"""

import torch

DISTRIBUTIONS = ("uniform", "normal", "large")


def distribution_for(trial):
    return DISTRIBUTIONS[trial % len(DISTRIBUTIONS)]


def _redraw(t, distribution):
    # Drawn in float32 on the CPU with the seeded generator, so the values do
    # not depend on the device or on which dtypes have CPU kernels for rand.
    shape = tuple(t.shape)
    if distribution == "uniform":
        v = torch.rand(shape, dtype=torch.float32)
    elif distribution == "normal":
        v = torch.randn(shape, dtype=torch.float32)
    elif distribution == "large":
        v = torch.randn(shape, dtype=torch.float32) * 1e3
    else:
        raise ValueError("unknown distribution %r" % distribution)
    if t.dtype in (torch.float64,):
        v = v.double()
    out = v.to(dtype=t.dtype, device=t.device)
    out.requires_grad_(t.requires_grad)
    return out


def apply_distribution(obj, distribution):
    """Redraws every floating tensor in obj (lists/tuples/dicts recursed)."""
    if isinstance(obj, torch.Tensor):
        if obj.is_floating_point():
            return _redraw(obj, distribution)
        return obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(apply_distribution(x, distribution) for x in obj)
    if isinstance(obj, dict):
        return {k: apply_distribution(v, distribution) for k, v in obj.items()}
    return obj


def to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(x, device) for x in obj)
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items()}
    return obj


def clone(obj):
    """A deep copy of the tensors in obj (other values are shared)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(clone(x) for x in obj)
    if isinstance(obj, dict):
        return {k: clone(v) for k, v in obj.items()}
    return obj


def make(get_inputs, seed, distribution, device):
    """Calls get_inputs under seed, redraws floats, moves to device: a list."""
    torch.manual_seed(seed)
    raw = get_inputs()
    if not isinstance(raw, (list, tuple)):
        raw = [raw]
    return list(to_device(apply_distribution(list(raw), distribution), device))


def shapes(inputs):
    """{"input0": [4, 8], ...} for the trial record (non-tensors: their repr)."""
    out = {}
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            out["input%d" % i] = list(x.shape)
        elif isinstance(x, (int, float, bool)):
            out["input%d" % i] = x
    return out
