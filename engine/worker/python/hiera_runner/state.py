"""Process-wide state a candidate could change, saved before a job and put
back after it, so one job cannot change how the next one runs or is timed
(the static checks reject such changes; this is the second line of defence).
"""

import sys
import time
import warnings

import torch

_ATTRIBUTES = [
    (time, ("time", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time", "sleep",
            "time_ns")),
    (torch.cuda, ("synchronize", "Event", "Stream", "current_stream", "default_stream", "set_stream", "stream")),
    (torch.cuda.Event, ("elapsed_time", "record", "synchronize", "query", "wait")),
    (torch, ("manual_seed",)),
]


class Snapshot(object):
    def __init__(self):
        self.attributes = [(obj, name, obj.__dict__[name] if name in obj.__dict__ else getattr(obj, name, None))
                           for obj, names in _ATTRIBUTES for name in names]
        self.modules = set(sys.modules)
        self.flags = _read_flags()

    def restore(self):
        for obj, name, value in self.attributes:
            try:
                if getattr(obj, name, None) is not value:
                    setattr(obj, name, value)
            except (AttributeError, TypeError):
                pass
        # Candidate/reference pseudo-modules loaded during the job (their own
        # imports of real packages stay: re-importing torch extensions is costly).
        for name in set(sys.modules) - self.modules:
            if name.startswith("hiera_reference_") or name.startswith("hiera_candidate_"):
                sys.modules.pop(name, None)
        _write_flags(self.flags)


def _flag_accessors():
    """(name, getter, setter) for each global flag; torch versions differ, so
    each is optional. (torch >= 2.9 raises when legacy TF32 flags are read after
    the new fp32_precision API was used: every access is guarded.)"""
    def attr(obj, name):
        return (lambda: getattr(obj, name), lambda v: setattr(obj, name, v))

    out = [
        ("default_dtype", torch.get_default_dtype, torch.set_default_dtype),
        ("grad", torch.is_grad_enabled, torch.set_grad_enabled),
    ]
    if hasattr(torch, "get_float32_matmul_precision"):
        out.append(("matmul_precision", torch.get_float32_matmul_precision, torch.set_float32_matmul_precision))
    for name, obj in (("cudnn_benchmark", torch.backends.cudnn), ("cudnn_deterministic", torch.backends.cudnn)):
        out.append((name,) + attr(obj, name.split("_", 1)[1]))
    out.append(("matmul_tf32",) + attr(torch.backends.cuda.matmul, "allow_tf32"))
    out.append(("cudnn_tf32",) + attr(torch.backends.cudnn, "allow_tf32"))
    if hasattr(torch, "is_deterministic_algorithms_warn_only_enabled"):
        out.append(("deterministic",
                    lambda: (torch.are_deterministic_algorithms_enabled(),
                             torch.is_deterministic_algorithms_warn_only_enabled()),
                    lambda v: torch.use_deterministic_algorithms(v[0], warn_only=v[1])))
    else:
        out.append(("deterministic", torch.are_deterministic_algorithms_enabled, torch.use_deterministic_algorithms))
    return out


def _read_flags():
    flags = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch >= 2.9 warns on legacy TF32 flags
        for name, get, _ in _flag_accessors():
            try:
                flags[name] = get()
            except Exception:
                pass
    return flags


def _write_flags(flags):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, get, put in _flag_accessors():
            if name not in flags:
                continue
            try:
                if get() != flags[name]:
                    put(flags[name])
            except Exception:
                pass
