"""A captured node's values written out twice: as JSON Args (the `capture`
job's argument encoding, JOB_PROTOCOL.md) and as Python source, so each
node's `code` is an expression over the other nodes' names that runs inside
a method of a subclass of the reference Model."""

import keyword
import math

import torch
import torch.fx

# operator.* functions traced from Python operators, written back as operators.
BINARY_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
                    "matmul": "@", "and_": "&", "or_": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
                    "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=", "is_": "is",
                    "is_not": "is not", "contains": "in"}
UNARY_OPERATORS = {"neg": "-", "pos": "+", "invert": "~", "not_": "not "}
# In-place operators have no expression form; their dunder method is the same call.
INPLACE_OPERATORS = {"iadd": "__iadd__", "isub": "__isub__", "imul": "__imul__", "itruediv": "__itruediv__",
                     "ifloordiv": "__ifloordiv__", "imod": "__imod__", "ipow": "__ipow__", "imatmul": "__imatmul__",
                     "iand": "__iand__", "ior": "__ior__", "ixor": "__ixor__", "ilshift": "__ilshift__",
                     "irshift": "__irshift__"}


def dtype_name(dtype):
    """torch.float32 -> "float32"."""
    return str(dtype).replace("torch.", "")


# --- JSON Args -------------------------------------------------------------

def encode(value):
    """A node argument -> its JSON Arg: numbers (ints stay ints), booleans,
    null; {"node"}, {"str"}, {"list"}, {"slice"}, {"dtype"}, {"ellipsis"},
    {"float"} for inf/nan, {"other": repr} for anything else."""
    if isinstance(value, torch.fx.Node):
        return {"node": value.name}
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return {"float": "nan"}
        if math.isinf(value):
            return {"float": "inf" if value > 0 else "-inf"}
        return value
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, (list, tuple)):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, slice):
        return {"slice": [encode(value.start), encode(value.stop), encode(value.step)]}
    if isinstance(value, torch.dtype):
        return {"dtype": dtype_name(value)}
    if value is Ellipsis:
        return {"ellipsis": True}
    return {"other": repr(value)}


def encode_kwargs(kwargs):
    return {str(k): encode(v) for k, v in kwargs.items()}


# --- Python source ---------------------------------------------------------

def expression(value):
    """A node argument as Python source."""
    if isinstance(value, torch.fx.Node):
        return value.name
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, tuple):
        if len(value) == 1:
            return "(%s,)" % expression(value[0])
        return "(%s)" % ", ".join(expression(v) for v in value)
    if isinstance(value, list):
        return "[%s]" % ", ".join(expression(v) for v in value)
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (expression(k), expression(v)) for k, v in value.items())
    if isinstance(value, slice):
        return "slice(%s, %s, %s)" % (expression(value.start), expression(value.stop), expression(value.step))
    if value is Ellipsis:
        return "..."
    if isinstance(value, torch.dtype):
        return str(value)  # "torch.float32"
    if isinstance(value, torch.device):
        return "torch.device(%r)" % str(value)
    if isinstance(value, (torch.memory_format, torch.layout)):
        return str(value)  # "torch.contiguous_format", "torch.strided"
    if isinstance(value, torch.Tensor):
        return tensor_literal(value)
    return repr(value)


def operand(value):
    """An operand of a Python operator: literals that start with a sign or
    are calls are parenthesised (`(-2.0) ** x`, not `-2.0 ** x`)."""
    text = expression(value)
    if isinstance(value, torch.fx.Node):
        return text
    if text.startswith("-") or text.startswith("float(") or " " in text:
        return "(%s)" % text
    return text


def index_expression(index):
    """The subscript of x[...]: slices as a:b:c, tuples without parentheses."""
    if isinstance(index, tuple):
        if not index:
            return "()"
        parts = [_index_item(i) for i in index]
        return ", ".join(parts) + ("," if len(parts) == 1 else "")
    return _index_item(index)


def _index_item(item):
    if isinstance(item, slice):
        start = "" if item.start is None else expression(item.start)
        stop = "" if item.stop is None else expression(item.stop)
        text = "%s:%s" % (start, stop)
        if item.step is not None:
            text += ":" + expression(item.step)
        return text
    return expression(item)


def size_list(sizes, source, source_shape):
    """The size list of a view, reshape or expand of `source` (a name) as
    source, not as the numbers the capture saw: leading sizes equal to the
    source's own are written `source.shape[i]`, and a first size that is the
    product of the source's leading sizes, the rest equal to its trailing
    ones, becomes -1, as does a first size that with the next ones splits
    the source's first (a windowed attention's [B * nW, heads, N, N] viewed
    as [B, nW, heads, N, N]). A view of a [B, T, 768] tensor to
    [B, T, 12, 64] then holds for another batch size; sizes the code fixes
    stay numbers."""
    sizes, source_shape = [int(s) for s in sizes], [int(s) for s in source_shape]
    out = [str(s) for s in sizes]
    lead = 0
    while lead < min(len(sizes), len(source_shape)) and sizes[lead] == source_shape[lead] and sizes[lead] > 1:
        out[lead] = "%s.shape[%d]" % (source, lead)
        lead += 1
    if lead == 0 and sizes and len(sizes) < len(source_shape):
        k = len(source_shape) - (len(sizes) - 1)  # the source's leading sizes the first size would flatten
        product = 1
        for d in source_shape[:k]:
            product *= d
        if k >= 2 and sizes[0] == product and sizes[1:] == source_shape[k:]:
            out[0] = "-1"
    if lead == 0 and len(source_shape) >= 2 and len(sizes) > len(source_shape):
        k = len(sizes) - (len(source_shape) - 1)  # the sizes the source's first would split into
        product = 1
        for d in sizes[:k]:
            product *= d
        if sizes[0] > 1 and product == source_shape[0] and sizes[k:] == source_shape[1:]:
            out[0] = "-1"
    return "[%s]" % ", ".join(out)


def call_arguments(args, kwargs):
    parts = [expression(a) for a in args]
    parts += ["%s=%s" % (k, expression(v)) for k, v in kwargs.items()]
    return ", ".join(parts)


def attribute_path(root, path, base="self"):
    """A dotted module path as source on `base`: `self.conv`, `self.seq[0]`
    (Sequential and ModuleList index), `self.blocks['a-b']` (ModuleDict),
    `getattr(self.m, '0')` otherwise."""
    text = base
    obj = root
    for part in path.split(".") if path else []:
        if part.isidentifier() and not keyword.iskeyword(part):
            text += "." + part
        elif part.isdigit() and isinstance(obj, (torch.nn.Sequential, torch.nn.ModuleList)):
            text += "[%s]" % part
        elif isinstance(obj, torch.nn.ModuleDict):
            text += "[%r]" % part
        else:
            text = "getattr(%s, %r)" % (text, part)
        obj = getattr(obj, part, None)
    return text


def tensor_literal(t):
    """A constant tensor as torch.tensor([...], dtype=...) on its device."""
    text = "torch.tensor(%r, dtype=%s" % (t.detach().cpu().tolist(), t.dtype)
    if t.device.type != "cpu":
        text += ", device=%r" % str(t.device)
    return text + ")"


def operator_call(name, args, kwargs):
    """operator.<name>(args) as a Python expression, or None when name is not
    an operator written as one."""
    if kwargs:
        return None
    if name == "getitem" and len(args) == 2:
        return "%s[%s]" % (operand(args[0]), index_expression(args[1]))
    if name in BINARY_OPERATORS and len(args) == 2:
        return "%s %s %s" % (operand(args[0]), BINARY_OPERATORS[name], operand(args[1]))
    if name in UNARY_OPERATORS and len(args) == 1:
        return "%s%s" % (UNARY_OPERATORS[name], operand(args[0]))
    if name in INPLACE_OPERATORS and len(args) == 2:
        return "%s.%s(%s)" % (operand(args[0]), INPLACE_OPERATORS[name], expression(args[1]))
    if name == "abs" and len(args) == 1:
        return "abs(%s)" % expression(args[0])
    return None
