"""The `capture` job: the reference forward as an op graph.

The reference Model is built from get_init_inputs() under the seed (as
evaluate builds it), run once on get_inputs()'s example inputs (its own
errors are job errors), traced with torch.fx.symbolic_trace (the standard
nn layers stay call_module nodes; registered buffers read in forward are
traced like parameters where that works) and the example inputs propagated through
the trace (ShapeProp) for every node's shape, stride and dtype. Where
symbolic tracing fails, torch.export (torch >= 2.1) is tried, its aten ops
mapped to the same kinds; where both fail the graph has no nodes and
`fallback` says why. Each node carries its kind (graph_ops), cost
(graph_cost), `code` (graph_render), where its value depends on no
input's values `facts` (graph_facts: small values, causal masks), and for
an fx capture its measured `time_ms` (graph_timing).
"""

import builtins
import contextlib
import dis
import inspect
import math
import sys
import warnings

import torch
import torch.fx

from . import graph_cost, graph_facts, graph_ops, graph_render, graph_timing, inputs as inputs_mod, loader, verify
from .evaluate import Job, _int_param
from .jsonrpc import INVALID_PARAMS, RpcError

_MAX_REASON = 400


def capture(params):
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    seed = _int_param(params, "seed", 1234, -(1 << 62))
    task = params.get("task")
    if isinstance(task, dict) and task.get("kind") == "cuda":
        return {"graph": None}  # a CUDA kernel has no module graph
    job = Job(task, seed)
    try:
        job.load_reference()
        get_inputs = job.reference_module.get("get_inputs")
        try:
            args = inputs_mod.make(get_inputs, seed, inputs_mod.distribution_for(0), job.device, job.reference_source)
        except Exception as e:
            raise RpcError(INVALID_PARAMS, "get_inputs() failed: %s"
                           % loader.describe_exception(e, "<reference>", "reference"))
        try:
            verify.call(job.reference, inputs_mod.clone(args), job.device, seed)
        except Exception as e:
            raise RpcError(INVALID_PARAMS, "the reference raised %s"
                           % loader.describe_exception(e, "<reference>", "reference"))
        return {"graph": build_graph(job.reference, args, seed)}
    finally:
        job.unload()


def build_graph(model, args, seed):
    """The Graph object of JOB_PROTOCOL.md for model on the example args."""
    graph = {"method": None, "fallback": None, "class_name": type(model).__name__,
             "forward_params": forward_params(model), "training": bool(model.training),
             "submodules": submodules(model), "parameters": parameters(model), "buffers": buffers(model),
             "nodes": [], "total_flops": 0, "total_bytes": 0}
    try:
        graph["nodes"] = FxCapture(model, args, seed).nodes()
        graph["method"] = "fx"
    except CaptureFailed as fx_failure:
        reason = fx_failure.reason
        try:
            nodes = export_nodes(model, args, seed)
        except CaptureFailed as export_failure:
            if export_failure.tried:
                reason += "; torch.export failed too: " + export_failure.reason
            nodes = None
        if nodes is None:
            graph["fallback"] = reason
        else:
            graph["nodes"] = nodes
            graph["method"] = "export"
    graph["total_flops"] = sum(n["flops"] for n in graph["nodes"])
    graph["total_bytes"] = sum(n["bytes"] for n in graph["nodes"])
    return graph


class CaptureFailed(Exception):
    def __init__(self, reason, tried=True):
        Exception.__init__(self, reason)
        self.reason = reason
        self.tried = tried


def _first_line(exc):
    text = str(exc).strip().splitlines()
    text = "%s: %s" % (type(exc).__name__, text[0] if text else "")
    return text if len(text) <= _MAX_REASON else text[:_MAX_REASON - 3] + "..."


def _trace_reason(exc):
    message = str(exc)
    if "control flow" in message:
        what = "forward has data-dependent control flow"
    elif "iteration" in message or "'len'" in message or "len(" in message:
        what = "forward iterates over a traced value or takes its len()"
    else:
        what = "forward could not be traced symbolically"
    return "%s: %s" % (what, _first_line(exc))


# --- the module around the graph -------------------------------------------

def forward_params(model):
    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return []
    names = []
    for p in signature.parameters.values():
        prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(p.kind, "")
        names.append(prefix + p.name)
    return names


# Constructor-relevant attributes of common layers, by class name (the
# nearest in the MRO wins); other torch.nn layers report their __constants__.
_CONV = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias",
         "padding_mode")
_NORM = ("num_features", "eps", "momentum", "affine", "track_running_stats")
_LAYER_ATTRS = {
    "Linear": ("in_features", "out_features", "bias"),
    "Bilinear": ("in1_features", "in2_features", "out_features", "bias"),
    "_ConvNd": _CONV,
    "_ConvTransposeNd": _CONV + ("output_padding",),
    "_BatchNorm": _NORM,
    "_InstanceNorm": _NORM,
    "LayerNorm": ("normalized_shape", "eps", "elementwise_affine"),
    "GroupNorm": ("num_groups", "num_channels", "eps", "affine"),
    "_DropoutNd": ("p", "inplace"),
    "ReLU": ("inplace",),
    "LeakyReLU": ("negative_slope", "inplace"),
    "Hardtanh": ("min_val", "max_val", "inplace"),
    "GELU": ("approximate",),
    "ELU": ("alpha", "inplace"),
    "CELU": ("alpha", "inplace"),
    "SELU": ("inplace",),
    "SiLU": ("inplace",),
    "Mish": ("inplace",),
    "Hardswish": ("inplace",),
    "Hardsigmoid": ("inplace",),
    "Softplus": ("beta", "threshold"),
    "Softmax": ("dim",),
    "LogSoftmax": ("dim",),
    "MultiheadAttention": ("embed_dim", "num_heads", "dropout", "batch_first", "bias", "kdim", "vdim"),
    "_MaxPoolNd": ("kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"),
    "AvgPool1d": ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
    "AvgPool2d": ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
    "AvgPool3d": ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
    "_AdaptiveAvgPoolNd": ("output_size",),
    "_AdaptiveMaxPoolNd": ("output_size", "return_indices"),
    "Flatten": ("start_dim", "end_dim"),
    "Embedding": ("num_embeddings", "embedding_dim", "padding_idx", "max_norm", "scale_grad_by_freq", "sparse"),
}


def _json_value(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, torch.dtype):
        return graph_render.dtype_name(value)
    return repr(value)


def layer_attrs(module):
    names = None
    for cls in type(module).__mro__:
        if cls.__module__.startswith("torch.nn") and cls.__name__ in _LAYER_ATTRS:
            names = _LAYER_ATTRS[cls.__name__]
            break
    if names is None:
        if not type(module).__module__.startswith("torch.nn"):
            return {}  # a user-defined module: its constructor's arguments are not known
        names = [n for n in getattr(module, "__constants__", []) if hasattr(module, n)]
    attrs = {}
    for name in names:
        if name == "bias":
            # Linear and Conv keep the tensor or None; MultiheadAttention its in_proj_bias.
            value = getattr(module, "in_proj_bias", None) if hasattr(module, "in_proj_weight") \
                else getattr(module, "bias", None)
            attrs["bias"] = value is not None
        elif hasattr(module, name):
            attrs[name] = _json_value(getattr(module, name))
    return attrs


def submodules(model):
    return {name: {"type": type(m).__name__, "attrs": layer_attrs(m)}
            for name, m in model.named_modules() if name}


def parameters(model):
    return {name: {"shape": list(p.shape), "dtype": graph_render.dtype_name(p.dtype)}
            for name, p in model.named_parameters()}


def buffers(model):
    out = {}
    for name, b in model.named_buffers():
        owner_path, _, leaf = name.rpartition(".")
        owner = model.get_submodule(owner_path) if owner_path else model
        persistent = leaf not in getattr(owner, "_non_persistent_buffers_set", ())
        out[name] = {"shape": list(b.shape), "dtype": graph_render.dtype_name(b.dtype), "persistent": persistent}
    return out


# --- metas ------------------------------------------------------------------

def _meta_of_value(value):
    """A tensor (real, fake or TensorMetadata) -> graph_cost.Meta, else None."""
    try:
        if isinstance(value, torch.Tensor):
            return graph_cost.Meta(tuple(int(d) for d in value.shape), tuple(int(s) for s in value.stride()),
                                   value.dtype)
        from torch.fx.passes.shape_prop import TensorMetadata
        if isinstance(value, TensorMetadata):
            return graph_cost.Meta(tuple(int(d) for d in value.shape), tuple(int(s) for s in value.stride),
                                   value.dtype)
    except Exception:  # a symbolic size: no static meta
        return None
    return None


def _result_metas(node):
    """(meta, tuple_metas): the node's single-tensor meta, or the metas of
    the items of its tuple result (None for non-tensor items)."""
    value = node.meta.get("val", node.meta.get("tensor_meta"))
    single = _meta_of_value(value)
    if single is not None:
        return single, None
    if isinstance(value, (list, tuple)):
        return None, [_meta_of_value(v) for v in value]
    return None, None


def meta_json(meta):
    if meta is None:
        return None
    return {"shape": list(meta.shape), "stride": list(meta.stride), "dtype": graph_render.dtype_name(meta.dtype)}


def _arg_nodes(node):
    """The nodes among a node's arguments, in argument order (a node passed
    twice, as in self.attn(x, x, x), is there twice)."""
    found = []
    torch.fx.node.map_arg((node.args, node.kwargs), found.append)
    return found


# --- torch.fx ------------------------------------------------------------------

def _unpacking_iter(self):
    """torch 1.x finds the instruction that iterates a Proxy (`a, b =
    torch.max(x, 1)`) by index, which Python 3.11's inline caches break
    (IndexError); this finds it by offset, as torch 2 does."""
    frame = inspect.currentframe().f_back
    for inst in dis.get_instructions(frame.f_code):
        if inst.offset == frame.f_lasti:
            if inst.opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(inst.argval))
            break
    return self.tracer.iter(self)


class _UnpackingProxy(torch.fx.Proxy):
    __iter__ = _unpacking_iter

    def __getattr__(self, k):  # `B, T, C = x.shape` unpacks an attribute
        return _UnpackingAttribute(self, k)


class _UnpackingAttribute(torch.fx.proxy.Attribute):
    __iter__ = _unpacking_iter

    def __getattr__(self, k):
        return _UnpackingAttribute(self, k)


class _UnpackingTracer(torch.fx.Tracer):
    def proxy(self, node):
        return _UnpackingProxy(node, self)


def _tracer(trace_buffers):
    """The tracer symbolic_trace would use (standard nn layers are leaves).
    With trace_buffers, reading a registered buffer in forward is a get_attr
    node, as reading a parameter is: slicing it by a traced size (a causal
    mask or a rotary table cut to the sequence length, `self.bias[:, :, :T,
    :T]`) then traces, where a real tensor indexed by a Proxy fails."""
    tracer = _UnpackingTracer() if int(torch.__version__.split(".")[0]) < 2 else torch.fx.Tracer()
    tracer.proxy_buffer_attributes = trace_buffers
    return tracer


# torch's functions that forward calls with a traced value and that reject a Proxy: tensor factories
# given a traced size (a mask or positions for this sequence: torch.ones(T, T), torch.arange(T)) or
# traced data (torch.tensor(lowest, dtype=scores.dtype)), and the limits of a traced dtype
# (torch.finfo(scores.dtype).min, the fill of mixed-precision masks).
# F.pad with traced sizes (padding to a skip connection's size: [diff // 2, diff - diff // 2]) too, where
# torch 1.x's argument check rejects a list holding Proxies before __torch_function__ is asked.
_TRACED_CALLS = tuple((torch, name) for name in ("ones", "zeros", "full", "empty", "arange", "eye", "linspace",
                                                 "tensor", "finfo", "iinfo")) + ((torch.nn.functional, "pad"),)


def _has_proxy(args, kwargs):
    found = []
    torch.fx.node.map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, torch.fx.Proxy) else a)
    return bool(found)


@contextlib.contextmanager
def _factories_traced(tracer):
    """While tracing, one of _TRACED_CALLS called with a traced value is a
    call_function node, as fx makes math.sqrt of one, where torch's own
    argument check rejects the Proxy; called with plain values it runs as ever."""
    originals = {(space, name): getattr(space, name) for space, name in _TRACED_CALLS}

    def traced(original):
        def call(*args, **kwargs):
            if _has_proxy(args, kwargs):
                return tracer.create_proxy("call_function", original, args, kwargs)
            return original(*args, **kwargs)
        return call

    try:
        for (space, name), original in originals.items():
            setattr(space, name, traced(original))
        yield
    finally:
        for (space, name), original in originals.items():
            setattr(space, name, original)


class _IntType(type):
    """isinstance/issubclass against the traced int answer as for int itself."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, builtins.int)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, builtins.int)


def _traced_int(tracer):
    """int() as the reference's own module sees it while tracing: of a traced
    value (a size computed from x.shape, Swin's
    `int(windows.shape[0] / (H * W / ws / ws))`) a call_function node, where
    int() must return a real int and fails on a Proxy; of anything else, int."""

    class TracedInt(builtins.int, metaclass=_IntType):
        def __new__(cls, *args, **kwargs):
            if _has_proxy(args, kwargs):
                return tracer.create_proxy("call_function", builtins.int, args, kwargs)
            return builtins.int(*args, **kwargs)

    return TracedInt


@contextlib.contextmanager
def _module_builtins_traced(tracer, model):
    """While tracing, the modules that define the model's classes (and their
    module-level helpers) read `int` as _traced_int; a module that binds the
    name itself keeps it, and torch's own modules never see the change."""
    names = {type(m).__module__ for m in model.modules()}
    patched = [sys.modules[n] for n in sorted(names)
               if n in sys.modules and not n.startswith("torch") and "int" not in vars(sys.modules[n])]
    traced = _traced_int(tracer)
    try:
        for module in patched:
            module.int = traced
        yield
    finally:
        for module in patched:
            vars(module).pop("int", None)


def _trace(model):
    """(tracer, graph): buffers traced first; as fx's default (a buffer read is
    a real tensor) where that fails, e.g. a buffer read in Python control flow,
    whose error is the one raised when both fail."""
    for trace_buffers in (True, False):
        tracer = _tracer(trace_buffers)
        try:
            with _factories_traced(tracer), _module_builtins_traced(tracer, model):
                return tracer, tracer.trace(model)
        except Exception as e:
            failure = e
    raise failure


class FxCapture(object):
    """symbolic_trace + ShapeProp, then one record per node."""

    def __init__(self, model, args, seed):
        self.model = model
        before = set(vars(model))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tracer, graph = _trace(model)  # symbolic_trace(model), with its tracer chosen here
                self.gm = torch.fx.GraphModule(tracer.root, graph, type(model).__name__)
        except Exception as e:
            raise CaptureFailed(_trace_reason(e))
        # Tensors the tracer had to make attributes of the model (constants
        # built inside forward) are not attributes of a fresh Model: their
        # code is a literal.
        self.constants = {name: getattr(model, name) for name in set(vars(model)) - before
                          if isinstance(getattr(model, name), torch.Tensor)}
        try:
            torch.manual_seed(seed)
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                propagation = graph_facts.FactProp(self.gm)
                propagation.propagate(*args)
                self.facts = propagation.facts
        except Exception as e:
            raise CaptureFailed("the traced graph did not run on the example inputs: " + _first_line(e))
        torch.manual_seed(seed)
        self.times = graph_timing.node_times(self.gm, inputs_mod.clone(args))
        self.order = {n: i for i, n in enumerate(self.gm.graph.nodes)}
        self._normalized = {}

    def nodes(self):
        return [self.record(n) for n in self.gm.graph.nodes]

    def record(self, node):
        meta, tuple_metas = _result_metas(node)
        kind = self.kind(node)
        out = {"name": node.name, "op": node.op, "target": self.target(node), "kind": kind,
               "args": [graph_render.encode(a) for a in node.args], "kwargs": graph_render.encode_kwargs(node.kwargs),
               "normalized": self.normalized(node), "meta": meta_json(meta)}
        if tuple_metas is not None:
            out["tuple_meta"] = [meta_json(m) for m in tuple_metas]
        out["flops"], out["bytes"] = self.cost(node, kind, meta, tuple_metas)
        out["code"] = self.code(node)
        if node.name in getattr(self, "facts", {}):
            out["facts"] = self.facts[node.name]
        if node.name in getattr(self, "times", {}):
            out["time_ms"] = round(self.times[node.name], 6)
        out["users"] = [u.name for u in sorted(node.users, key=self.order.get)]
        return out

    def kind(self, node):
        if node.op == "placeholder":
            return "input"
        if node.op == "output":
            return "output"
        if node.op == "get_attr":
            return "attr"
        if node.op == "call_module":
            return graph_ops.kind_of_module(self.model.get_submodule(node.target))
        if node.op == "call_method":
            return graph_ops.kind_of_method(node.target)
        if node.target is getattr and len(node.args) == 2:
            return self._attribute_kind(node.args[0], node.args[1])
        return graph_ops.kind_of_function(node.target)

    def _attribute_kind(self, source, name):
        """x.T is a transpose; m.indices of a tuple result (torch.max's) is one of its items."""
        if name in ("T", "mT"):
            return "transpose"
        if isinstance(source, torch.fx.Node) and _result_metas(source)[1] is not None:
            return "getitem"
        return "unknown"

    def target(self, node):
        if node.op == "call_function":
            return _function_name(node.target)
        return str(node.target)

    def code(self, node):
        if node.op == "placeholder":
            return str(node.target).lstrip("*")
        if node.op == "output":
            return graph_render.expression(node.args[0])
        if node.op == "get_attr":
            if node.target in self.constants:
                return graph_render.tensor_literal(self.constants[node.target])
            return graph_render.attribute_path(self.model, node.target)
        arguments = graph_render.call_arguments(node.args, node.kwargs)
        if node.op == "call_module":
            return "%s(%s)" % (graph_render.attribute_path(self.model, node.target), arguments)
        if node.op == "call_method":
            rest = graph_render.call_arguments(node.args[1:], node.kwargs)
            return "%s.%s(%s)" % (graph_render.operand(node.args[0]), node.target, rest)
        return _function_code(node.target, node.args, node.kwargs)

    def normalized(self, node):
        if node.op not in ("call_function", "call_method", "call_module"):
            return None
        if node not in self._normalized:
            self._normalized[node] = self._normalized_uncached(node)
        return self._normalized[node]

    def _normalized_uncached(self, node):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pair = self._normalize(node)
        except Exception:
            return None
        if pair is None or pair.args:
            return None
        return graph_render.encode_kwargs(pair.kwargs)

    def _normalize(self, node):
        from torch.fx.operator_schemas import ArgsKwargsPair, normalize_function
        if node.op == "call_module":
            # torch's module normalisation keeps positional args: bind them to forward's names.
            module = self.model.get_submodule(node.target)
            bound = inspect.signature(module.forward).bind(*node.args, **node.kwargs)
            bound.apply_defaults()
            return ArgsKwargsPair((), dict(bound.arguments))
        if node.op == "call_method":
            # A Tensor method has the schema of the torch function of its name (self is `input`).
            fn = getattr(torch, node.target, None)
            if fn is None or not callable(fn):
                return None
            target, args = fn, (node.args[0],) + tuple(node.args[1:])
        else:
            target, args = node.target, node.args
        try:
            pair = normalize_function(target, args, node.kwargs, normalize_to_only_use_kwargs=True)
        except RuntimeError:  # "the schema match was ambiguous"
            pair = None
        if pair is None:
            # Overloaded schemas (torch.add, torch.max) need the argument types to choose.
            arg_types = tuple(self._type_of(a) for a in args)
            kwarg_types = {k: self._type_of(v) for k, v in node.kwargs.items()}
            pair = normalize_function(target, args, node.kwargs, arg_types, kwarg_types,
                                      normalize_to_only_use_kwargs=True)
        return pair

    def _type_of(self, value):
        if isinstance(value, torch.fx.Node):
            meta, _ = _result_metas(value)
            return torch.Tensor if meta is not None else value.meta.get("type", type(None))
        if isinstance(value, (list, tuple)) and value:
            import typing
            types = set(self._type_of(v) for v in value)
            if len(types) == 1:
                return typing.List[types.pop()]
        return type(value)

    def cost(self, node, kind, meta, tuple_metas):
        outputs = [meta] if meta is not None else [m for m in (tuple_metas or []) if m is not None]
        if node.op in ("placeholder", "output", "get_attr"):
            return 0, 0
        arg_nodes = _arg_nodes(node)
        operands = [_result_metas(n)[0] for n in arg_nodes]
        distinct = [_result_metas(n)[0] for n in dict.fromkeys(arg_nodes)]  # each tensor read once
        distinct = [m for m in distinct if m is not None]
        norm = self.normalized(node) or {}
        training = bool(self.model.training)
        dropout_p = _number(norm.get("p"))
        weight_shape = kernel_size = attention = None
        extra = 0
        if node.op == "call_module":
            module = self.model.get_submodule(node.target)
            training = bool(module.training)
            dropout_p = getattr(module, "p", dropout_p)
            weight = getattr(module, "weight", None)
            weight_shape = tuple(weight.shape) if isinstance(weight, torch.Tensor) else None
            kernel_size = getattr(module, "kernel_size", None)
            if kind == "multi_head_attention":
                attention = {"embed_dim": module.embed_dim, "num_heads": module.num_heads,
                             "batch_first": bool(getattr(module, "batch_first", False))}
            tensors = {id(t): t for t in list(module.parameters()) + list(module.buffers())}
            extra = sum(t.numel() * t.element_size() for t in tensors.values())
        else:
            if "training" in norm and isinstance(norm["training"], bool):
                training = norm["training"]
            if kind.startswith("conv") and len(operands) > 1 and operands[1] is not None:
                weight_shape = operands[1].shape
            kernel_size = _plain(norm.get("kernel_size"))
            if kernel_size is None and (kind.startswith("avg_pool") or kind.startswith("max_pool")) \
                    and len(node.args) > 1:
                kernel_size = _plain(graph_render.encode(node.args[1]))
        flops = graph_cost.flops(kind, operands, outputs, weight_shape=weight_shape, kernel_size=kernel_size,
                                 training=training, dropout_p=dropout_p, attention=attention)
        if node.op == "call_function" and node.target is torch.einsum and node.args:
            flops = graph_cost.einsum_flops(node.args[0], operands)
        moved = graph_cost.bytes_moved(kind, distinct, operands, outputs, extra, training, dropout_p)
        return int(flops), int(moved)


def _number(arg):
    return arg if isinstance(arg, (int, float)) and not isinstance(arg, bool) else None


def _plain(arg):
    """A JSON Arg of ints back to a Python int or list (kernel sizes)."""
    if isinstance(arg, int) and not isinstance(arg, bool):
        return arg
    if isinstance(arg, dict) and "list" in arg and all(isinstance(v, int) for v in arg["list"]):
        return list(arg["list"])
    return None


def _is_reference_function(fn):
    return (getattr(fn, "__module__", None) or "").startswith("hiera_reference_")


def _function_name(fn):
    if _is_reference_function(fn):
        return fn.__name__  # a helper of the reference source (torch.fx.wrap): its own global name
    return graph_ops.qualified_name(fn)


def _function_code(fn, args, kwargs):
    name = _function_name(fn)
    if name.startswith("operator."):
        text = graph_render.operator_call(name[len("operator."):], args, kwargs)
        if text is not None:
            return text
    if name == "getattr" and len(args) == 2 and isinstance(args[1], str) and args[1].isidentifier() and not kwargs:
        return "%s.%s" % (graph_render.operand(args[0]), args[1])
    return "%s(%s)" % (name, graph_render.call_arguments(args, kwargs))


# --- torch.export ---------------------------------------------------------------

# aten operators whose second argument is a size list that follows their input's sizes.
SIZED_ATEN = ("view", "reshape", "_unsafe_view", "expand")


def export_nodes(model, args, seed):
    """The nodes of torch.export's graph, in the same form as the fx ones.
    Raises CaptureFailed (tried=False where torch has no torch.export)."""
    export = getattr(getattr(torch, "export", None), "export", None)
    if export is None:
        raise CaptureFailed("torch %s has no torch.export" % torch.__version__, tried=False)
    try:
        torch.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = export(model, tuple(args))
    except Exception as e:
        raise CaptureFailed(_first_line(e))
    try:
        return ExportCapture(model, program).nodes()
    except CaptureFailed:
        raise
    except Exception as e:  # a torch version whose program looks otherwise
        raise CaptureFailed("its graph could not be read: " + _first_line(e))


class ExportCapture(FxCapture):
    """An ExportedProgram's graph: parameters, buffers and constants are
    placeholders there (written here as get_attr nodes on the Model), calls
    are aten operators (torch.ops.aten.*)."""

    def __init__(self, model, program):
        self.model = model
        self.program = program
        self.gm = program.graph_module
        signature = program.graph_signature
        self.attrs = dict(getattr(signature, "inputs_to_parameters", {}) or {})
        self.attrs.update(getattr(signature, "inputs_to_buffers", {}) or {})
        lifted = dict(getattr(signature, "inputs_to_lifted_tensor_constants", {}) or {})
        tables = [getattr(program, "constants", None), getattr(program, "tensor_constants", None)]
        self.constants = {}
        for placeholder, name in lifted.items():
            for table in tables:
                if isinstance(table, dict) and name in table:
                    self.constants[placeholder] = table[name]
        params = [p for p in forward_params(model) if not p.startswith("*")]
        users = list(signature.user_inputs)
        self.input_names = dict(zip(users, params)) if len(users) == len(params) else {}
        self.user_outputs = list(signature.user_outputs)
        self.order = {n: i for i, n in enumerate(self.gm.graph.nodes)}
        self._normalized = {}

    def record(self, node):
        out = FxCapture.record(self, node)
        if node.op == "placeholder" and (node.name in self.attrs or node.name in self.constants):
            out["op"], out["kind"] = "get_attr", "attr"
            out["target"] = self.attrs.get(node.name, node.name)
        elif node.op == "placeholder":
            out["target"] = self.input_names.get(node.name, node.name)
        elif node.op == "output":
            out["args"] = [graph_render.encode(self._returned(node))]
        return out

    def kind(self, node):
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            weight_rank, transposed = None, False
            if graph_ops.aten_name(node.target) in ("convolution", "_convolution") and len(node.args) > 6:
                weight = _result_metas(node.args[1])[0] if isinstance(node.args[1], torch.fx.Node) else None
                weight_rank = len(weight.shape) if weight is not None else None
                transposed = bool(node.args[6])
            return graph_ops.kind_of_aten(node.target, weight_rank, transposed)
        return FxCapture.kind(self, node)

    def target(self, node):
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            return "torch.ops." + str(node.target)
        return FxCapture.target(self, node)

    def code(self, node):
        if node.op == "placeholder":
            if node.name in self.constants:
                return graph_render.tensor_literal(self.constants[node.name])
            if node.name in self.attrs:
                return graph_render.attribute_path(self.model, self.attrs[node.name])
            return self.input_names.get(node.name, node.name)
        if node.op == "output":
            return graph_render.expression(self._returned(node))
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            sized = self._sized_call(node)
            if sized is not None:
                return sized
            return "torch.ops.%s(%s)" % (node.target, graph_render.call_arguments(node.args, node.kwargs))
        return FxCapture.code(self, node)

    def _sized_call(self, node):
        """A view, reshape or expand whose size list follows its source's
        sizes (graph_render.size_list): export writes the numbers it saw,
        which would specialise the generated module to the capture's shape."""
        if graph_ops.aten_name(node.target) not in SIZED_ATEN or len(node.args) < 2:
            return None
        source, sizes = node.args[0], node.args[1]
        if not isinstance(source, torch.fx.Node) or not isinstance(sizes, (list, tuple)) or \
                not all(isinstance(d, int) and not isinstance(d, bool) for d in sizes):
            return None
        meta = _result_metas(source)[0]
        if meta is None:
            return None
        rest = graph_render.call_arguments(node.args[2:], node.kwargs)
        return "torch.ops.%s(%s, %s%s)" % (node.target, source.name, graph_render.size_list(sizes, source.name, meta.shape),
                                          ", " + rest if rest else "")

    def normalized(self, node):
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            return None  # aten schemas are positional as written; args say it all
        return FxCapture.normalized(self, node)

    def _returned(self, node):
        """What forward returns: the user outputs (buffer mutations, which
        come first, left out) in forward's structure."""
        flat = list(node.args[0]) if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
        outputs = flat[len(flat) - len(self.user_outputs):] if self.user_outputs else flat
        spec = None
        call_spec = getattr(self.program, "call_spec", None)
        if call_spec is not None:
            spec = getattr(call_spec, "out_spec", None)
        if spec is None:
            graphs = getattr(self.program, "module_call_graph", None) or []
            if graphs and getattr(graphs[0], "signature", None) is not None:
                spec = graphs[0].signature.out_spec
        if spec is not None:
            from torch.utils import _pytree
            return _pytree.tree_unflatten(outputs, spec)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
