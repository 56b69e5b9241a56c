"""float32 matrix products on TF32 tensor cores at float32's accuracy (3xTF32).

Each operand is split into two TF32 numbers, big = tf32(x) and small =
tf32(x - big), so that big + small is x within 2**-22 of it. One TF32 GEMM
over K tripled, [a_big | a_big | a_small] @ [b_big ; b_small ; b_big], sums
the three products that matter (a_small * b_small, below 2**-22, is left
out) in float32 accumulators: errors of float32's order, where TF32 alone
errs by 2**-11. cuBLAS's float32 GEMM runs on the SIMT units (51.6 TFLOP/s on
an H100), TF32 on the tensor cores (417): three times the work still takes
about half the time.

Candidates import it (`from hiera_runner import split_tf32 as _split_tf32`)
and call linear() and matmul(): the TF32 switch is set around the one GEMM
and restored, inside this trusted module, so a candidate's own text never
sets it and the static checks' numerics rule holds for everything else it
does. A delivered module holds the code between the markers below in place of
that import (deliver.py inlines it, its nvrtc_runtime import becoming the
delivered shim); its names all start with _tf32x3_ so that they do not meet
the candidate's, and no word of it names hiera (a delivered module is standalone).

A weight's split is kept on the weight tensor, keyed by its version, so a
module's parameters are split once. Inputs that are not float32 CUDA tensors
take the ordinary product. Known difference: an infinite input gives NaN where
its product meets a weight whose small part is 0 (inf * 0).
"""

# --- 3xTF32 float32 products (split_tf32), inlined: from here ---
import torch
from hiera_runner import nvrtc_runtime as _tf32x3_rt

_TF32X3_KERNEL = r"""
// One pass over a row-major [rows, k] float32 matrix: each row written as three k-wide parts of a [rows, 3k]
// one, TF32's big and small parts of every element in the order `order` names (0: big, big, small for a left
// operand; 1: big, small, big for a right operand stored as rows). An infinite big part has a zero small one.
__device__ __forceinline__ float tf32_round(float v) {
  return __uint_as_float((__float_as_uint(v) + 0x1000u) & 0xFFFFE000u);
}
__device__ __forceinline__ float tf32_rest(float v, float big) {
  return isfinite(big) ? tf32_round(v - big) : 0.0f;
}
extern "C" __global__ void split_tf32_rows(const float4* __restrict__ x, float4* __restrict__ out, long long rows,
                                           int k4, int order) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= k4) return;
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const float4 v = x[r * k4 + c];
    const float4 big = make_float4(tf32_round(v.x), tf32_round(v.y), tf32_round(v.z), tf32_round(v.w));
    const float4 small = make_float4(tf32_rest(v.x, big.x), tf32_rest(v.y, big.y),
                                     tf32_rest(v.z, big.z), tf32_rest(v.w, big.w));
    float4* row = out + r * 3 * (long long)k4;
    row[c] = big;
    row[k4 + c] = order == 0 ? big : small;
    row[2 * k4 + c] = order == 0 ? small : big;
  }
}
"""
_TF32X3_THREADS = 256
_tf32x3_kernels = {}  # torch.device -> the compiled split kernel
# Out of torch.compile's graphs (dynamo would trace the switch and the launch); torch before 2.1 has no
# torch.compiler, and no torch.compile to keep out of.
_tf32x3_not_compiled = getattr(getattr(torch, "compiler", None), "disable", None) or (lambda fn: fn)


def _tf32x3_round(t):
    """The nearest TF32 number (ties away from zero) of each float32 element, on its bits."""
    return torch.bitwise_and(t.view(torch.int32) + 0x1000, -0x2000).view(torch.float32)


def _tf32x3_split(t):
    """(big, small): float32 tensors holding TF32 numbers, big + small within 2**-22 of t."""
    big = _tf32x3_round(t)
    small = _tf32x3_round(t - big)
    return big, torch.where(torch.isfinite(big), small, torch.zeros_like(small))


def _tf32x3_rows(t, order):
    """[..., k] -> [..., 3k]: each row's big and small parts, (big, big, small) for order 0 (a left operand),
    (big, small, big) for 1 (a right operand's rows). One kernel where the rows are 16-byte float4s."""
    k = t.shape[-1]
    if t.is_cuda and t.is_contiguous() and k % 4 == 0 and t.data_ptr() % 16 == 0 and t.numel() > 0:
        out = torch.empty(t.shape[:-1] + (3 * k,), dtype=t.dtype, device=t.device)
        rows = t.numel() // k
        k4 = k // 4
        grid = ((k4 + _TF32X3_THREADS - 1) // _TF32X3_THREADS, max(1, min(rows, 65535)), 1)
        kernel = _tf32x3_kernels.get(t.device)
        if kernel is None:  # once a device: compile()'s own cache hashes the source on every call
            kernel = _tf32x3_kernels[t.device] = _tf32x3_rt.compile(_TF32X3_KERNEL, "split_tf32_rows")
        kernel(grid, (_TF32X3_THREADS, 1, 1), t, out, _tf32x3_rt.int64(rows), k4, order)
        return out
    big, small = _tf32x3_split(t)
    return torch.cat((big, big, small) if order == 0 else (big, small, big), -1)


def _tf32x3_right(b):
    """[..., k, n] -> [..., 3k, n]: a right operand's parts stacked along k (big, small, big)."""
    big, small = _tf32x3_split(b)
    return torch.cat((big, small, big), -2)


def _tf32x3_cached(t, key, make):
    """make(t), kept on t while its data and version stay (a parameter is split once)."""
    if t.is_inference():  # an inference tensor keeps no version: split every call
        return make(t)
    stamp = (key, t.data_ptr(), tuple(t.shape), tuple(t.stride()), t._version)
    held = getattr(t, "_tf32x3_split", None)
    if held is not None and held[0] == stamp:
        return held[1]
    value = make(t)
    t._tf32x3_split = (stamp, value)
    return value


def _tf32x3_applies(*tensors):
    return all(isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.is_cuda for t in tensors)


# torch >= 2.9 switches TF32 with fp32_precision (its legacy allow_tf32 warns); earlier ones have only allow_tf32.
_TF32X3_PRECISION_API = torch.torch_version.TorchVersion(torch.__version__) >= (2, 9)


def _tf32x3_product(fn, *args):
    """fn(*args) with cuBLAS's float32 GEMMs on TF32, the switch put back after."""
    matmul = torch.backends.cuda.matmul
    if _TF32X3_PRECISION_API:
        previous = matmul.fp32_precision
        matmul.fp32_precision = "tf32"
        try:
            return fn(*args)
        finally:
            matmul.fp32_precision = previous
    previous = matmul.allow_tf32
    matmul.allow_tf32 = True
    try:
        return fn(*args)
    finally:
        matmul.allow_tf32 = previous


@_tf32x3_not_compiled
def _tf32x3_linear(x, weight, bias=None):
    """F.linear(x, weight, bias) for float32 CUDA tensors as one 3xTF32 GEMM."""
    if (not _tf32x3_applies(x, weight) or (bias is not None and not _tf32x3_applies(bias))
            or x.shape[-1] != weight.shape[-1] or weight.dim() != 2):
        return torch.nn.functional.linear(x, weight, bias)
    x3 = _tf32x3_rows(x.contiguous(), 0)
    w3 = _tf32x3_cached(weight, "linear", lambda w: _tf32x3_rows(w.contiguous(), 1))
    return _tf32x3_product(torch.nn.functional.linear, x3, w3, bias)


@_tf32x3_not_compiled
def _tf32x3_matmul(a, b):
    """torch.matmul(a, b) for float32 CUDA tensors of two or more dimensions as one 3xTF32 GEMM."""
    if not _tf32x3_applies(a, b) or a.dim() < 2 or b.dim() < 2 or a.shape[-1] != b.shape[-2]:
        return torch.matmul(a, b)
    a3 = _tf32x3_rows(a.contiguous(), 0)
    b3 = _tf32x3_cached(b, "matmul", _tf32x3_right)
    return _tf32x3_product(torch.matmul, a3, b3)
# --- 3xTF32 float32 products (split_tf32), inlined: to here ---


def inlined_source():
    """The text a delivered module holds in place of the import: this file from the first marker line to the
    end of the second, as it is on disk."""
    import os
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "split_tf32.py")) as f:
        lines = f.read().splitlines(True)
    first = lines.index(_TF32X3_FROM)
    return "".join(lines[first:lines.index(_TF32X3_TO) + 1])


_TF32X3_FROM = "# --- 3xTF32 float32 products (split_tf32), inlined: from here ---\n"
_TF32X3_TO = "# --- 3xTF32 float32 products (split_tf32), inlined: to here ---\n"

# The names candidates call.
linear = _tf32x3_linear
matmul = _tf32x3_matmul
split = _tf32x3_split
split_rows = _tf32x3_rows
