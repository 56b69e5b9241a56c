"""Facts about values the capture can know for every call: those of nodes
that depend on no input's values, only on buffers, parameters, constants and
sizes (a stencil's weights built in __init__, a `torch.triu(torch.ones(T, T),
1)` mask, `self.bias[:, :, :T, :T] == 0`). The proposer's recipes read them
(the node's "facts") instead of recognising each spelling that builds them.

- "values": the flattened values of a tensor of at most MAX_VALUES elements;
- "mask": a tensor whose last two dims are square and alike for every
  leading index, as attention uses it: "causal_masked" (True exactly above
  the diagonal: masked_fill's mask), "causal_kept" (nonzero exactly on and
  below it) or "causal_additive" (0 on and below, -inf or <= -1e4 above).
"""

import math

import torch
from torch.fx.passes.shape_prop import ShapeProp

MAX_VALUES = 1024
_MAX_MASK_ELEMENTS = 1 << 26  # larger tensors are not inspected: the capture stays quick
_LARGE_NEGATIVE = -1.0e4
# Calls whose results are not a function of their arguments.
_RANDOM_WORDS = ("rand", "dropout", "bernoulli", "normal", "multinomial", "poisson", "exponential_", "uniform_")
# Non-tensor results that are sizes, not values: x.size(-1), x.shape, x.device.
_SHAPE_METHODS = ("size", "dim", "numel", "ndimension")
_SHAPE_ATTRIBUTES = ("shape", "device", "dtype", "ndim", "is_cuda")
# Calls that read only their tensor argument's shape, dtype and device.
_SHAPE_ONLY_CALLS = ("ones_like", "zeros_like", "full_like", "new_ones", "new_zeros", "new_full")


class FactProp(ShapeProp):
    """ShapeProp that also records the facts of every value-independent node."""

    def __init__(self, gm):
        ShapeProp.__init__(self, gm)
        self.facts = {}
        self._fixed = set()   # nodes whose value depends on no input's values
        self._sizes = set()   # nodes that are sizes of something (and arithmetic on sizes)

    def run_node(self, n):
        result = ShapeProp.run_node(self, n)
        try:
            self._classify(n, result)
        except Exception:  # a fact is an optimisation: never a capture failure
            pass
        return result

    def _classify(self, n, result):
        inputs = _input_nodes(n)
        if _is_size_query(n) or (inputs and all(i in self._sizes for i in inputs) and not isinstance(result, torch.Tensor)):
            self._sizes.add(n)
            return
        if n.op == "get_attr":
            fixed = True
        elif str(getattr(n.target, "__name__", n.target)) in _SHAPE_ONLY_CALLS:
            fixed = True
        elif n.op in ("placeholder", "output") or _is_random(n, self.module):
            fixed = False
        else:
            fixed = all(i in self._fixed or i in self._sizes for i in inputs)
        if not fixed:
            return
        self._fixed.add(n)
        facts = value_facts(result)
        if facts:
            self.facts[n.name] = facts


def _input_nodes(n):
    found = []
    torch.fx.node.map_arg((n.args, n.kwargs), found.append)
    return found


def _is_size_query(n):
    if n.op == "call_method" and n.target in _SHAPE_METHODS:
        return True
    return n.op == "call_function" and n.target is getattr and len(n.args) == 2 and n.args[1] in _SHAPE_ATTRIBUTES


def _is_random(n, model):
    if n.op == "call_module":
        name = type(model.get_submodule(n.target)).__name__.lower()
    else:
        name = str(getattr(n.target, "__name__", n.target)).lower()
    return any(word in name for word in _RANDOM_WORDS)


def value_facts(value):
    if not isinstance(value, torch.Tensor) or value.is_complex():
        return None
    facts = {}
    t = value.detach()
    if t.numel() <= MAX_VALUES:
        facts["values"] = [_number(v) for v in t.reshape(-1).tolist()]
    mask = mask_structure(t)
    if mask is not None:
        facts["mask"] = mask
    return facts or None


def _number(v):
    if isinstance(v, bool):
        return 1 if v else 0
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)  # "inf", "-inf", "nan"
    return v


def mask_structure(t):
    if t.dim() < 2 or t.shape[-1] != t.shape[-2] or t.shape[-1] < 2 or t.numel() > _MAX_MASK_ELEMENTS:
        return None
    size = t.shape[-1]
    planes = t.reshape(-1, size, size)
    first = planes[0]
    if planes.shape[0] > 1 and not bool((planes == first).all()):
        return None
    above = torch.ones(size, size, dtype=torch.bool, device=t.device).triu(1)
    if t.dtype == torch.bool:
        if torch.equal(first, above):
            return "causal_masked"
        if torch.equal(first, ~above):
            return "causal_kept"
        return None
    values = first.float()
    if bool((values[above] == 0).all()) and bool((values[~above] != 0).all()):
        return "causal_kept"
    if bool((values[~above] == 0).all()) and bool((values[above] <= _LARGE_NEGATIVE).all()):
        return "causal_additive"
    return None
