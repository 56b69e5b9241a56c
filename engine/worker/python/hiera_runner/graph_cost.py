"""Flops and minimum bytes of one captured node, from its kind and the
shapes and dtypes around it (the planner's roofline reads them).

Flops: a multiply-add counts 2. matmul/linear/bmm/addmm/baddbmm
2*M*N*K (2 * output elements * K); convolution 2 * output elements *
Cin/groups * prod(kernel) (a transposed one: 2 * input elements *
Cout/groups * prod(kernel)); pools output elements * prod(kernel);
torch.einsum of two operands 2 * the product of every index's size (its
multiply-adds); elementwise ops 1 per output element; reductions 1 per input element;
softmax and log_softmax 5 per element; layer/group/instance norm 8 per
element, batch norm 8 in training and 4 in eval (normalise, scale, shift
with running statistics); attention its four products and its softmax.
Bytes: every distinct tensor input read once (a module's own parameters and
buffers included) plus every tensor output written once, at their dtype
sizes. Views (and copies that do not happen: contiguous of a contiguous
tensor, to() without a dtype change, dropout in eval) cost 0 flops and 0 bytes.
"""

import collections

import torch

from . import graph_ops

# shape and stride: tuples of ints; dtype: a torch.dtype.
Meta = collections.namedtuple("Meta", ["shape", "stride", "dtype"])

SOFTMAX_FLOPS_PER_ELEMENT = 5   # max, subtract, exp, sum, divide
NORM_FLOPS_PER_ELEMENT = 8      # mean, subtract, square, sum, rsqrt, multiply, scale, shift
BATCH_NORM_EVAL_FLOPS_PER_ELEMENT = 4  # subtract mean, multiply invstd, scale, shift

_ELEMENT_SIZES = {}


def element_size(dtype):
    if dtype not in _ELEMENT_SIZES:
        _ELEMENT_SIZES[dtype] = torch.empty((), dtype=dtype).element_size()
    return _ELEMENT_SIZES[dtype]


def numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def nbytes(meta):
    return numel(meta.shape) * element_size(meta.dtype)


def is_contiguous(meta):
    expected = 1
    for size, stride in reversed(list(zip(meta.shape, meta.stride))):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _prod(values):
    n = 1
    for v in values:
        n *= int(v)
    return n


def _kernel_elements(kernel_size, spatial_dims):
    if kernel_size is None:
        return 1
    if isinstance(kernel_size, (list, tuple)):
        return _prod(kernel_size)
    return int(kernel_size) ** spatial_dims


def _last_dim(meta):
    return int(meta.shape[-1]) if meta is not None and len(meta.shape) else 1


def _attention_flops(batch, heads, q_len, kv_len, head_dim, value_dim):
    scores = 2 * batch * heads * q_len * kv_len * head_dim
    weighted = 2 * batch * heads * q_len * kv_len * value_dim
    return scores + weighted + SOFTMAX_FLOPS_PER_ELEMENT * batch * heads * q_len * kv_len


def einsum_flops(equation, operands):
    """2 x the product of every index's size for a two-operand torch.einsum
    (each combination of indices is one multiply-add); 0 where the equation
    has an ellipsis, another number of operands, or sizes that disagree."""
    if not isinstance(equation, str) or "..." in equation or len(operands) != 2 or any(m is None for m in operands):
        return 0
    inputs = equation.replace(" ", "").split("->")[0].split(",")
    if len(inputs) != 2:
        return 0
    sizes = {}
    for letters, meta in zip(inputs, operands):
        if len(letters) != len(meta.shape):
            return 0
        for letter, size in zip(letters, meta.shape):
            if sizes.setdefault(letter, int(size)) != int(size) and 1 not in (sizes[letter], int(size)):
                return 0
            sizes[letter] = max(sizes[letter], int(size))  # a broadcast index of 1
    return 2 * _prod(sizes.values())


def flops(kind, operands, outputs, weight_shape=None, kernel_size=None, training=False, dropout_p=None,
          attention=None):
    """operands: the Metas of the node's tensor arguments in argument order
    (None where an argument is not a tensor); outputs: the Metas of its tensor
    results. weight_shape: a convolution's weight; kernel_size: a pool's;
    attention: a MultiheadAttention's {"embed_dim", "num_heads", "batch_first"}."""
    first = operands[0] if operands else None
    out = outputs[0] if outputs else None
    out_elements = numel(out.shape) if out is not None else 0
    if kind in ("linear", "matmul", "bmm"):
        return 2 * out_elements * _last_dim(first)
    if kind in ("addmm", "baddbmm"):
        mat1 = operands[1] if len(operands) > 1 else None
        return 2 * out_elements * _last_dim(mat1)
    if kind.startswith("conv_transpose"):
        if weight_shape is None or first is None:
            return 0
        return 2 * numel(first.shape) * _prod(weight_shape[1:])
    if kind.startswith("conv"):
        return 2 * out_elements * _prod(weight_shape[1:]) if weight_shape is not None else 0
    if kind.startswith("avg_pool") or kind.startswith("max_pool"):
        return out_elements * _kernel_elements(kernel_size, int(kind[-2]))
    if kind == "adaptive_avg_pool2d":
        return numel(first.shape) if first is not None else 0
    if kind == "dropout":
        return out_elements if training and dropout_p != 0 else 0
    if kind in graph_ops.ELEMENTWISE_KINDS:
        return out_elements
    if kind in graph_ops.REDUCTION_KINDS:
        return numel(first.shape) if first is not None else 0
    if kind in ("softmax", "log_softmax"):
        return SOFTMAX_FLOPS_PER_ELEMENT * out_elements
    if kind == "batch_norm":
        return (NORM_FLOPS_PER_ELEMENT if training else BATCH_NORM_EVAL_FLOPS_PER_ELEMENT) * out_elements
    if kind in graph_ops.NORM_KINDS:
        return NORM_FLOPS_PER_ELEMENT * out_elements
    if kind == "scaled_dot_product_attention":
        if len(operands) < 3 or any(m is None or len(m.shape) < 2 for m in operands[:3]):
            return 0
        q, k, v = operands[:3]
        return _attention_flops(numel(q.shape[:-2]), 1, q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1])
    if kind == "multi_head_attention" and attention is not None:
        return _mha_flops(operands, attention)
    return 0


def _mha_flops(operands, attention):
    if len(operands) < 3 or any(m is None for m in operands[:3]):
        return 0
    q, k, v = operands[:3]
    e, h = int(attention["embed_dim"]), int(attention["num_heads"])
    batched = len(q.shape) == 3
    if batched and attention.get("batch_first"):
        batch, q_len, kv_len = q.shape[0], q.shape[1], k.shape[1]
    elif batched:
        q_len, batch, kv_len = q.shape[0], q.shape[1], k.shape[0]
    else:
        batch, q_len, kv_len = 1, q.shape[0], k.shape[0]
    kdim = _last_dim(k)
    vdim = _last_dim(v)
    projections = 2 * batch * (q_len * e * e + kv_len * kdim * e + kv_len * vdim * e + q_len * e * e)
    return projections + _attention_flops(batch, h, q_len, kv_len, e // h, e // h)


def moves_no_data(kind, operands, outputs, training=False, dropout_p=None):
    """True for views and for copies that do not happen."""
    if kind in ("input", "output", "attr"):
        return True
    if kind == "getitem":
        # Basic indexing is a view; a tensor among the indices gathers.
        return len([m for m in operands[1:] if m is not None]) == 0
    if kind in graph_ops.VIEW_KINDS:
        return True
    first = operands[0] if operands else None
    if kind == "contiguous":
        return first is None or is_contiguous(first)
    if kind == "to":
        return first is None or not outputs or outputs[0].dtype == first.dtype
    if kind == "dropout":
        return not training or dropout_p == 0
    return False


def bytes_moved(kind, distinct_inputs, operands, outputs, extra_bytes=0, training=False, dropout_p=None):
    """distinct_inputs: the Metas of the tensors read, each once (a tensor
    used twice is read once); extra_bytes: a module's parameters and buffers."""
    if moves_no_data(kind, operands, outputs, training, dropout_p):
        return 0
    if kind == "unknown" and not outputs:
        return 0  # x.size(0), x.shape: no tensor is read or written
    return sum(nbytes(m) for m in distinct_inputs) + extra_bytes + sum(nbytes(m) for m in outputs)
