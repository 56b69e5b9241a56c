"""Trial inputs: seeds, distributions, moving and cloning input lists.

get_inputs() decides shapes, dtypes and integer contents under the trial's
seed; every floating tensor is then redrawn from the trial's distribution so
that candidates also meet negatives and large magnitudes, not only [0, 1).
"""

import collections
import hashlib
import os

import torch

DISTRIBUTIONS = ("uniform", "normal", "large")


def _cache_limit():
    """Bytes of trial inputs kept on the host: HIERA_INPUT_CACHE_BYTES, else a
    quarter of the memory, at most 8 GiB."""
    if "HIERA_INPUT_CACHE_BYTES" in os.environ:
        return int(os.environ["HIERA_INPUT_CACHE_BYTES"])
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        memory = 0
    return min(8 << 30, memory // 4)


class InputCache(object):
    """Trial inputs by (reference source, seed, distribution), on the host.

    A problem is evaluated many times with the same seeds (its reference, each
    candidate, the delivered form); drawing a large input on the CPU twice per
    trial costs seconds, a copy from the cache a fraction of that. Least
    recently used entries go first beyond the byte limit."""

    def __init__(self, limit):
        self.limit = limit
        self.entries = collections.OrderedDict()
        self.bytes = 0
        self.hits = self.misses = 0

    @staticmethod
    def key(source, seed, distribution):
        return (hashlib.sha256(source.encode()).hexdigest(), seed, distribution)

    def get(self, key):
        found = self.entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self.entries.move_to_end(key)
        return found[0]

    def put(self, key, inputs):
        size = _tensor_bytes(inputs)
        if size > self.limit or key in self.entries:
            return
        self.entries[key] = (inputs, size)
        self.bytes += size
        while self.bytes > self.limit:
            _, (_, dropped) = self.entries.popitem(last=False)
            self.bytes -= dropped


def _tensor_bytes(obj):
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_tensor_bytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(_tensor_bytes(x) for x in obj.values())
    return 0


CACHE = InputCache(_cache_limit())


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


def _on_device(get_inputs, seed, distribution, device):
    """get_inputs() with the device as torch's default device, every floating
    tensor redrawn in place from a generator seeded with the trial's seed: no
    host copy, no transfer, and no more memory than the inputs themselves."""
    torch.manual_seed(seed)
    with torch.device(device):
        raw = get_inputs()
    if not isinstance(raw, (list, tuple)):
        raw = [raw]
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    out = []
    for x in raw:
        if isinstance(x, torch.Tensor):
            if x.device != device:
                x = x.to(device)
            if x.is_floating_point():
                x = x.detach()
                if distribution == "uniform":
                    x.uniform_(0.0, 1.0, generator=gen)
                elif distribution == "normal":
                    x.normal_(0.0, 1.0, generator=gen)
                elif distribution == "large":
                    x.normal_(0.0, 1e3, generator=gen)
                else:
                    raise ValueError("unknown distribution %r" % distribution)
        out.append(x)
    return out


def make(get_inputs, seed, distribution, device, source=None):
    """Calls get_inputs under seed, redraws floats, moves to device: a list.
    On CUDA (torch >= 2.0) the inputs are made on the device itself. On the
    CPU, with `source` (the text that defines get_inputs) the host copy is
    cached and handed out again as new tensors: the caller may write into them."""
    device = torch.device(device)
    if device.type == "cuda" and hasattr(device, "__enter__"):
        return _on_device(get_inputs, seed, distribution, device)
    key = InputCache.key(source, seed, distribution) if source is not None else None
    cached = CACHE.get(key) if key is not None else None
    if cached is not None:
        return list(_copy_to(cached, device))
    torch.manual_seed(seed)
    raw = get_inputs()
    if not isinstance(raw, (list, tuple)):
        raw = [raw]
    host = list(apply_distribution(list(raw), distribution))
    if key is None or any(isinstance(x, torch.Tensor) and x.device.type != "cpu" for x in host):
        return list(to_device(host, device))
    CACHE.put(key, host)
    return list(_copy_to(host, device))


def _copy_to(obj, device):
    """New tensors on device with obj's values and requires_grad: the cached ones stay as drawn."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().to(device, copy=True).requires_grad_(obj.requires_grad)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_copy_to(x, device) for x in obj)
    if isinstance(obj, dict):
        return {k: _copy_to(v, device) for k, v in obj.items()}
    return obj


def shapes(inputs):
    """{"input0": [4, 8], ...} for the trial record (non-tensors: their repr)."""
    out = {}
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            out["input%d" % i] = list(x.shape)
        elif isinstance(x, (int, float, bool)):
            out["input%d" % i] = x
    return out
