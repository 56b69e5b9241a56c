"""Speed of light: the least time counted work can take on the probed device.

time = max(flops / peak, bytes / bandwidth) with the ceilings measured by
`probe` ({"copy_gbs": ..., "gemm_tflops": {"float32": ..., "tf32": ..., ...}}).
A candidate measured faster than that is wrong, not fast (MEASURING.md).
"""

import torch

_DTYPE_KEYS = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
               torch.float64: "float64"}


def _number(value):
    if value is None or isinstance(value, bool):
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def find_ceilings(params, task):
    """The ceilings object from params or task; a whole probe result (with
    "measured") is accepted too."""
    for holder in (params, task):
        c = holder.get("ceilings") if isinstance(holder, dict) else None
        if isinstance(c, dict):
            return c.get("measured") if isinstance(c.get("measured"), dict) else c
    return None


def peak_tflops(gemm, dtype, allow):
    """The GEMM peak for dtype (TF32's for float32 when allowed, else 3xTF32's
    where that beats float32's: a third of the TF32 peak, float32's accuracy,
    engine/common/gpu_ceilings.h); the highest listed when the dtype has none
    (a lower bound stays a lower bound)."""
    if not isinstance(gemm, dict):
        return _number(gemm)
    values = {k: _number(v) for k, v in gemm.items()}
    values = {k: v for k, v in values.items() if v}
    if not values:
        return None
    key = _DTYPE_KEYS.get(dtype)
    candidates = [values.get(key)] if key in values else []
    if key == "float32" and "tf32" in values:
        candidates.append(values["tf32"] if "tf32" in allow else values["tf32"] / 3.0)
    if not candidates:
        return max(values.values())
    return max(c for c in candidates if c)


def speed_of_light_ms(flops, bytes_, ceilings, dtype=torch.float32, allow=()):
    """The bound in milliseconds, or None when nothing can be bounded."""
    if not isinstance(ceilings, dict):
        return None
    flops, bytes_ = _number(flops), _number(bytes_)
    bounds = []
    if flops:
        peak = peak_tflops(ceilings.get("gemm_tflops"), dtype, allow)
        if peak:
            bounds.append(flops / (peak * 1e12))
    if bytes_:
        bw = _number(ceilings.get("copy_gbs"))
        if bw:
            bounds.append(bytes_ / (bw * 1e9))
    return max(bounds) * 1e3 if bounds else None
