"""float32 matrix products on TF32 tensor cores at float32's accuracy (3xTF32).

Each operand is split into two TF32 numbers, big = tf32(x) and small =
tf32(x - big), so that big + small is x within 2**-22 of it. One TF32 GEMM
over K tripled, [a_big | a_big | a_small] @ [b_big ; b_small ; b_big], sums
the three products that matter (a_small * b_small, below 2**-22, is left
out) in float32 accumulators: errors of float32's order, where TF32 alone
errs by 2**-11. cuBLAS's float32 GEMM runs on the SIMT units (51.6 TFLOP/s on
an H100), TF32 on the tensor cores (417): three times the work still takes
about half the time.

Candidates call linear() and matmul(); the TF32 switch is set around the one
GEMM and restored (the candidate's own source never sets it, so the static
checks' numerics rule still holds for everything else it does). A weight's
split is kept on the weight tensor, keyed by its version, so a module's
parameters are split once. Inputs that are not float32 CUDA tensors take the
ordinary product. Known difference: an infinite input gives NaN where its
product with a weight whose small part is 0 meets inf * 0.
"""

import torch

_KERNEL_SOURCE = r"""
// One pass over a row-major [rows, k] float32 matrix: each row written as three k-wide parts of a
// [rows, 3k] one, TF32's big and small parts of every element in the order `order` names
// (0: big, big, small for a left operand; 1: big, small, big for a right operand stored as rows).
__device__ __forceinline__ float hiera_tf32(float v) {
  return __uint_as_float((__float_as_uint(v) + 0x1000u) & 0xFFFFE000u);
}
extern "C" __global__ void hiera_split_tf32_rows(const float4* __restrict__ x, float4* __restrict__ out,
                                                 long long rows, int k4, int order) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= k4) return;
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const float4 v = x[r * k4 + c];
    float4 big, small;
    big.x = hiera_tf32(v.x); small.x = isfinite(big.x) ? hiera_tf32(v.x - big.x) : 0.0f;
    big.y = hiera_tf32(v.y); small.y = isfinite(big.y) ? hiera_tf32(v.y - big.y) : 0.0f;
    big.z = hiera_tf32(v.z); small.z = isfinite(big.z) ? hiera_tf32(v.z - big.z) : 0.0f;
    big.w = hiera_tf32(v.w); small.w = isfinite(big.w) ? hiera_tf32(v.w - big.w) : 0.0f;
    float4* row = out + r * 3 * (long long)k4;
    row[c] = big;
    row[k4 + c] = order == 0 ? big : small;
    row[2 * k4 + c] = order == 0 ? small : big;
  }
}
"""
_KERNEL_NAME = "hiera_split_tf32_rows"
_THREADS = 256
_LEFT, _RIGHT = 0, 1
_kernels = {}  # device index -> the compiled kernel
# Out of torch.compile's graphs (dynamo would trace the switch and the launch); torch before 2.1 has no
# torch.compiler, and no torch.compile to keep out of.
_not_compiled = getattr(getattr(torch, "compiler", None), "disable", None) or (lambda fn: fn)


def _round_tf32(t):
    """The nearest TF32 number (ties away from zero) of each float32 element, on its bits."""
    return torch.bitwise_and(t.view(torch.int32) + 0x1000, -0x2000).view(torch.float32)


def split(t):
    """(big, small): float32 tensors holding TF32 numbers, big + small within 2**-22 of t."""
    big = _round_tf32(t)
    small = _round_tf32(t - big)
    return big, torch.where(torch.isfinite(big), small, torch.zeros_like(small))


def _kernel(device):
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _kernels:
        from . import nvrtc_runtime
        _kernels[index] = nvrtc_runtime.compile(_KERNEL_SOURCE, _KERNEL_NAME)
    return _kernels[index]


def split_rows(t, order):
    """[..., k] -> [..., 3k]: each row's big and small parts, (big, big, small) for order 0 (a left operand),
    (big, small, big) for 1 (a right operand's rows). One kernel where the rows are 16-byte float4s."""
    k = t.shape[-1]
    if t.is_cuda and t.is_contiguous() and k % 4 == 0 and t.data_ptr() % 16 == 0 and t.numel() > 0:
        out = torch.empty(t.shape[:-1] + (3 * k,), dtype=t.dtype, device=t.device)
        from . import nvrtc_runtime
        rows = t.numel() // k
        k4 = k // 4
        grid = ((k4 + _THREADS - 1) // _THREADS, max(1, min(rows, 65535)), 1)
        _kernel(t.device)(grid, (_THREADS, 1, 1), t, out, nvrtc_runtime.int64(rows), k4, order)
        return out
    big, small = split(t)
    parts = (big, big, small) if order == _LEFT else (big, small, big)
    return torch.cat(parts, -1)


def _cached(t, key, make):
    """make(t), kept on t while its data and version stay (a parameter is split once)."""
    try:
        version = t._version
    except RuntimeError:  # an inference tensor keeps no version: split every call
        return make(t)
    stamp = (key, t.data_ptr(), tuple(t.shape), tuple(t.stride()), version)
    held = getattr(t, "_hiera_split_tf32", None)
    if held is not None and held[0] == stamp:
        return held[1]
    value = make(t)
    try:
        t._hiera_split_tf32 = (stamp, value)
    except (AttributeError, RuntimeError):
        pass
    return value


def _applies(*tensors):
    return all(isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.is_cuda for t in tensors)


def _tf32_product(fn, *args):
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        return fn(*args)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


@_not_compiled
def linear(x, weight, bias=None):
    """F.linear(x, weight, bias) for float32 CUDA tensors as one 3xTF32 GEMM."""
    if not _applies(x, weight) or (bias is not None and not _applies(bias)) or x.shape[-1] != weight.shape[-1]:
        return torch.nn.functional.linear(x, weight, bias)
    x3 = split_rows(x.contiguous(), _LEFT)
    w3 = _cached(weight, "linear", lambda w: split_rows(w.contiguous(), _RIGHT))
    return _tf32_product(torch.nn.functional.linear, x3, w3, bias)


def _right_operand(b):
    big, small = split(b)
    return torch.cat((big, small, big), -2)


@_not_compiled
def matmul(a, b):
    """torch.matmul(a, b) for float32 CUDA tensors of two or more dimensions as one 3xTF32 GEMM."""
    if not _applies(a, b) or a.dim() < 2 or b.dim() < 2 or a.shape[-1] != b.shape[-2]:
        return torch.matmul(a, b)
    a3 = split_rows(a.contiguous(), _LEFT)
    b3 = _cached(b, "matmul", _right_operand)
    return _tf32_product(torch.matmul, a3, b3)
