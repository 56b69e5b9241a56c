"""Which device a task runs on, what it is, and whether its CUDA context
still works after a candidate failed (an illegal address poisons the context
for the whole process: the runner must then be restarted)."""

import os

import torch

from .jsonrpc import INVALID_PARAMS, RpcError


def default_index():
    """The CUDA device this runner serves: --device N / HIERA_DEVICE, else 0."""
    try:
        return int(os.environ.get("HIERA_DEVICE", "0"))
    except ValueError:
        return 0


def select(task):
    """task.device -> torch.device: "cpu", or CUDA when asked or available."""
    wanted = task.get("device")
    if wanted in (None, "", "auto"):
        wanted = "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(wanted, str):
        raise RpcError(INVALID_PARAMS, "task.device must be \"cuda\" or \"cpu\"")
    if wanted == "cpu":
        return torch.device("cpu")
    if wanted.startswith("cuda"):
        if not torch.cuda.is_available():
            raise RpcError(INVALID_PARAMS, "task.device is %r but this runner sees no CUDA device "
                           "(torch %s, CUDA build %s)" % (wanted, torch.__version__, torch.version.cuda))
        dev = torch.device(wanted)
        if dev.index is None:
            dev = torch.device("cuda", torch.cuda.current_device())
        return dev
    raise RpcError(INVALID_PARAMS, "task.device must be \"cuda\" or \"cpu\", not %r" % wanted)


def describe():
    """{"index", "name", "cc"} of the current CUDA device, or None."""
    if not torch.cuda.is_available():
        return None
    index = torch.cuda.current_device()
    major, minor = torch.cuda.get_device_capability(index)
    return {"index": index, "name": torch.cuda.get_device_name(index), "cc": "%d.%d" % (major, minor)}


def context_broken(device):
    """True when the CUDA context no longer works (a sticky error)."""
    if device is None or device.type != "cuda":
        return False
    try:
        torch.cuda.synchronize(device)
        probe = torch.ones(1, device=device)
        probe.add_(1)
        return float(probe.item()) != 2.0
    except Exception:
        return True


def is_cuda_error(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return any(s in text for s in ("CUDA error", "CUDA_ERROR", "cudaError", "AcceleratorError",
                                   "illegal memory access", "device-side assert", "CUDA driver error"))
