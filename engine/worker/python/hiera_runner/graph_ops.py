"""The canonical op vocabulary of the `capture` job, and which kind each
spelling of an op is: torch.* and torch.nn.functional.* functions, Tensor
methods, operator.* (what `a + b` traces to), nn module types and, for graphs
from torch.export, aten operators. `torch.relu`, `F.relu`, `x.relu()`,
`x.relu_()` and `nn.ReLU` are all "relu"; whatever fits none is "unknown".
"""

import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

KINDS = (
    "input", "output", "attr",
    "linear", "matmul", "bmm", "addmm", "baddbmm",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "relu", "leaky_relu", "gelu", "sigmoid", "tanh", "silu", "mish", "hardswish", "hardsigmoid", "hardtanh",
    "elu", "selu", "softplus", "clamp",
    "add", "sub", "mul", "div", "neg", "pow", "exp", "log", "sqrt", "rsqrt", "abs", "minimum", "maximum", "where",
    "sum", "mean", "amax", "amin", "max", "min", "logsumexp",
    "softmax", "log_softmax",
    "layer_norm", "group_norm", "instance_norm", "batch_norm",
    "dropout", "identity",
    "getitem", "view", "reshape", "permute", "transpose", "contiguous", "to", "flatten", "unsqueeze", "squeeze",
    "expand", "cat", "stack",
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_avg_pool2d",
    "multi_head_attention", "scaled_dot_product_attention",
    "diag",
    "unknown",
)

# Kinds that only reinterpret their input (no arithmetic, no copy of their own).
VIEW_KINDS = frozenset(("getitem", "view", "reshape", "permute", "transpose", "flatten", "unsqueeze", "squeeze",
                        "expand", "identity"))
ELEMENTWISE_KINDS = frozenset(("relu", "leaky_relu", "gelu", "sigmoid", "tanh", "silu", "mish", "hardswish",
                               "hardsigmoid", "hardtanh", "elu", "selu", "softplus", "clamp", "add", "sub", "mul",
                               "div", "neg", "pow", "exp", "log", "sqrt", "rsqrt", "abs", "minimum", "maximum",
                               "where"))
REDUCTION_KINDS = frozenset(("sum", "mean", "amax", "amin", "max", "min", "logsumexp"))
NORM_KINDS = frozenset(("softmax", "log_softmax", "layer_norm", "group_norm", "instance_norm", "batch_norm"))


def _names(kind, *names):
    return {n: kind for n in names}


# One table for the base names of functions, methods and operators: the
# same name means the same op in torch.*, torch.nn.functional.*, Tensor
# methods (trailing "_": the in-place form) and the operator module.
_NAME_KINDS = {}
for _kind, _spellings in (
        ("linear", ("linear",)),
        ("matmul", ("matmul", "mm", "imatmul")),
        ("bmm", ("bmm",)),
        ("addmm", ("addmm",)),
        ("baddbmm", ("baddbmm",)),
        ("conv1d", ("conv1d",)), ("conv2d", ("conv2d",)), ("conv3d", ("conv3d",)),
        ("conv_transpose1d", ("conv_transpose1d",)), ("conv_transpose2d", ("conv_transpose2d",)),
        ("conv_transpose3d", ("conv_transpose3d",)),
        ("relu", ("relu",)),
        ("leaky_relu", ("leaky_relu",)),
        ("gelu", ("gelu",)),
        ("sigmoid", ("sigmoid",)),
        ("tanh", ("tanh",)),
        ("silu", ("silu",)),
        ("mish", ("mish",)),
        ("hardswish", ("hardswish",)),
        ("hardsigmoid", ("hardsigmoid",)),
        ("hardtanh", ("hardtanh", "relu6")),
        ("elu", ("elu",)),
        ("selu", ("selu",)),
        ("softplus", ("softplus",)),
        ("clamp", ("clamp", "clip", "clamp_min", "clamp_max")),
        ("add", ("add", "iadd")),
        ("sub", ("sub", "isub", "subtract", "rsub")),
        ("mul", ("mul", "imul", "multiply")),
        ("div", ("div", "truediv", "itruediv", "divide", "true_divide")),
        ("neg", ("neg", "negative")),
        ("pow", ("pow", "ipow", "square")),
        ("exp", ("exp",)),
        ("log", ("log",)),
        ("sqrt", ("sqrt",)),
        ("rsqrt", ("rsqrt",)),
        ("abs", ("abs", "absolute")),
        ("minimum", ("minimum",)),
        ("maximum", ("maximum",)),
        ("where", ("where",)),
        ("sum", ("sum",)),
        ("mean", ("mean",)),
        ("amax", ("amax",)),
        ("amin", ("amin",)),
        ("max", ("max",)),
        ("min", ("min",)),
        ("logsumexp", ("logsumexp",)),
        ("softmax", ("softmax",)),
        ("log_softmax", ("log_softmax",)),
        ("layer_norm", ("layer_norm",)),
        ("group_norm", ("group_norm",)),
        ("instance_norm", ("instance_norm",)),
        ("batch_norm", ("batch_norm",)),
        ("dropout", ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")),
        ("identity", ("clone", "detach", "alias")),
        ("getitem", ("getitem",)),
        ("view", ("view", "view_as")),
        ("reshape", ("reshape", "reshape_as")),
        ("permute", ("permute",)),
        ("transpose", ("transpose", "t", "swapaxes", "swapdims")),
        ("contiguous", ("contiguous",)),
        ("to", ("to", "type", "float", "half", "double", "bfloat16", "int", "long", "bool", "cuda", "cpu",
                "type_as")),
        ("flatten", ("flatten",)),
        ("unsqueeze", ("unsqueeze",)),
        ("squeeze", ("squeeze",)),
        ("expand", ("expand", "expand_as", "broadcast_to")),
        ("cat", ("cat", "concat", "concatenate")),
        ("stack", ("stack",)),
        ("avg_pool1d", ("avg_pool1d",)), ("avg_pool2d", ("avg_pool2d",)), ("avg_pool3d", ("avg_pool3d",)),
        ("max_pool1d", ("max_pool1d",)), ("max_pool2d", ("max_pool2d",)), ("max_pool3d", ("max_pool3d",)),
        ("adaptive_avg_pool2d", ("adaptive_avg_pool2d",)),
        ("multi_head_attention", ("multi_head_attention_forward",)),
        ("scaled_dot_product_attention", ("scaled_dot_product_attention",)),
        ("diag", ("diag",)),
):
    _NAME_KINDS.update(_names(_kind, *_spellings))

# Operator spellings with dunder or Python-only names.
_NAME_KINDS.update({"__add__": "add", "__radd__": "add", "__iadd__": "add", "__sub__": "sub", "__rsub__": "sub",
                    "__isub__": "sub", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul",
                    "__truediv__": "div", "__rtruediv__": "div", "__itruediv__": "div", "__neg__": "neg",
                    "__pow__": "pow", "__rpow__": "pow", "__matmul__": "matmul", "__rmatmul__": "matmul",
                    "__getitem__": "getitem", "__abs__": "abs"})

# Namespaces whose functions the table describes, with the prefix their
# qualified names use; the first that holds a function names it.
NAMESPACES = ((torch, "torch"), (F, "torch.nn.functional"), (operator, "operator"))


def kind_of_name(name):
    """A function or method base name ("relu_", "add", "__add__") -> kind."""
    if name in _NAME_KINDS:
        return _NAME_KINDS[name]
    if name.endswith("_") and not name.endswith("__") and name[:-1] in _NAME_KINDS:
        return _NAME_KINDS[name[:-1]]  # the in-place form: relu_, add_, clamp_
    return "unknown"


def qualified_name(fn):
    """"torch.relu", "torch.nn.functional.gelu", "operator.add", "getattr", or
    module.qualname for anything else."""
    name = getattr(fn, "__name__", None)
    if name is not None:
        for namespace, prefix in NAMESPACES:
            if getattr(namespace, name, None) is fn:
                return "%s.%s" % (prefix, name)
        import builtins
        if getattr(builtins, name, None) is fn:
            return name
    module = getattr(fn, "__module__", None) or ""
    qual = getattr(fn, "__qualname__", None) or name or repr(fn)
    return "%s.%s" % (module, qual) if module else qual


def kind_of_function(fn):
    """A call_function target -> kind (functions outside torch, F and
    operator are "unknown": a same-named helper is not the torch op)."""
    name = getattr(fn, "__name__", None)
    if name is None:
        return "unknown"
    for namespace, _ in NAMESPACES:
        if getattr(namespace, name, None) is fn:
            return kind_of_name(name)
    if getattr(torch.Tensor, name, None) is fn:  # torch.Tensor.add(x, y) spelled as a function
        return kind_of_name(name)
    return "unknown"


def kind_of_method(name):
    """A call_method target (a Tensor method name) -> kind."""
    return kind_of_name(name)


def _module_table():
    table = {}
    for kind, names in (
            ("linear", ("Linear", "LazyLinear")),
            ("conv1d", ("Conv1d", "LazyConv1d")), ("conv2d", ("Conv2d", "LazyConv2d")),
            ("conv3d", ("Conv3d", "LazyConv3d")),
            ("conv_transpose1d", ("ConvTranspose1d", "LazyConvTranspose1d")),
            ("conv_transpose2d", ("ConvTranspose2d", "LazyConvTranspose2d")),
            ("conv_transpose3d", ("ConvTranspose3d", "LazyConvTranspose3d")),
            ("relu", ("ReLU",)), ("leaky_relu", ("LeakyReLU",)), ("gelu", ("GELU",)), ("sigmoid", ("Sigmoid",)),
            ("tanh", ("Tanh",)), ("silu", ("SiLU",)), ("mish", ("Mish",)), ("hardswish", ("Hardswish",)),
            ("hardsigmoid", ("Hardsigmoid",)), ("hardtanh", ("Hardtanh",)),  # ReLU6 is a Hardtanh
            ("elu", ("ELU",)), ("selu", ("SELU",)), ("softplus", ("Softplus",)),
            ("softmax", ("Softmax",)), ("log_softmax", ("LogSoftmax",)),
            ("layer_norm", ("LayerNorm",)), ("group_norm", ("GroupNorm",)),
            ("instance_norm", ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")),
            ("batch_norm", ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")),
            ("dropout", ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")),
            ("identity", ("Identity",)), ("flatten", ("Flatten",)),
            ("avg_pool1d", ("AvgPool1d",)), ("avg_pool2d", ("AvgPool2d",)), ("avg_pool3d", ("AvgPool3d",)),
            ("max_pool1d", ("MaxPool1d",)), ("max_pool2d", ("MaxPool2d",)), ("max_pool3d", ("MaxPool3d",)),
            ("adaptive_avg_pool2d", ("AdaptiveAvgPool2d",)),
            ("multi_head_attention", ("MultiheadAttention",)),
    ):
        for name in names:
            cls = getattr(nn, name, None)  # torch versions differ in which exist
            if cls is not None:
                table[cls] = kind
    return table


_MODULE_KINDS = _module_table()


def kind_of_module(module):
    """An nn.Module instance -> kind, by its class or the nearest torch.nn
    base class (a subclass of nn.Conv2d is still conv2d)."""
    for cls in type(module).__mro__:
        if cls in _MODULE_KINDS:
            return _MODULE_KINDS[cls]
    return "unknown"


# aten operator names (torch.export graphs) that differ from the table's.
_ATEN_KINDS = {"mm": "matmul", "t": "transpose", "_unsafe_view": "view", "slice": "getitem", "select": "getitem",
               "index": "getitem", "_to_copy": "to", "lift_fresh_copy": "identity",
               "max_pool2d_with_indices": "max_pool2d",
               "max_pool1d_with_indices": "max_pool1d", "max_pool3d_with_indices": "max_pool3d",
               "_adaptive_avg_pool2d": "adaptive_avg_pool2d", "native_dropout": "dropout",
               "_native_batch_norm_legit": "batch_norm", "_native_batch_norm_legit_no_training": "batch_norm",
               "_native_batch_norm_legit_functional": "batch_norm", "native_batch_norm": "batch_norm",
               "native_layer_norm": "layer_norm", "native_group_norm": "group_norm", "_softmax": "softmax",
               "_log_softmax": "log_softmax", "_scaled_dot_product_flash_attention": "scaled_dot_product_attention",
               "_scaled_dot_product_efficient_attention": "scaled_dot_product_attention",
               "_scaled_dot_product_cudnn_attention": "scaled_dot_product_attention",
               "_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
               "_native_multi_head_attention": "multi_head_attention", "scalar_tensor": "unknown"}


def aten_name(target):
    """torch.ops.aten.relu.default -> "relu"."""
    packet = getattr(target, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or getattr(target, "__name__", None) or str(target)
    return name.split(".")[0]


def kind_of_aten(target, weight_rank=None, transposed=False):
    """An aten OpOverload -> kind. convolution needs the weight's rank
    (3, 4, 5) and the transposed flag to say conv2d or conv_transpose3d."""
    name = aten_name(target)
    if name in ("convolution", "_convolution"):
        if weight_rank not in (3, 4, 5):
            return "unknown"
        return "%s%dd" % ("conv_transpose" if transposed else "conv", weight_rank - 2)
    if name in _ATEN_KINDS:
        return _ATEN_KINDS[name]
    return kind_of_name(name)
