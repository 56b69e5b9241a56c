"""The `capture` job on the CPU: the nodes, kinds, codes, metas and costs of
small references, and that the `code` strings, run in order inside a
subclass's forward (as the engine uses them), give the reference's output
bit for bit."""

import textwrap
import unittest

import torch
import torch.nn.functional as F

import fixtures  # noqa: F401  (puts hiera_runner on sys.path)
from hiera_runner import graph_capture, inputs as inputs_mod, jsonrpc, loader, verify

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
SEED = 1234


def reference(body, inputs, init="[]"):
    return (HEAD + textwrap.dedent(body) + "\n\ndef get_inputs():\n    return %s\n\n\ndef get_init_inputs():\n"
            "    return %s\n" % (inputs, init))


def capture(source, seed=SEED, **task_extra):
    task = {"kind": "pytorch", "reference": {"source": source}, "device": "cpu"}
    task.update(task_extra)
    return graph_capture.capture({"task": task, "seed": seed})["graph"]


def subclass_source(graph):
    """The engine's use of a graph: one assignment per node, in order (the
    placeholders' args give the parameters' defaults)."""
    def default(arg):  # a JSON Arg (numbers, booleans, null, {"str"}) as Python
        return repr(arg["str"]) if isinstance(arg, dict) else repr(arg)

    placeholders = [n for n in graph["nodes"] if n["op"] == "placeholder"]
    params = ["%s=%s" % (name, default(node["args"][0])) if node["args"] else name
              for name, node in zip(graph["forward_params"], placeholders)]
    lines = ["class Captured(Model):", "    def forward(self, %s):" % ", ".join(params)]
    for node in graph["nodes"]:
        if node["op"] == "output":
            lines.append("        return " + node["code"])
        else:
            lines.append("        %s = %s" % (node["name"], node["code"]))
    return "\n".join(lines) + "\n"


def replay(testcase, source, graph):
    """Asserts that Captured (built from the codes) and Model give the same output bits."""
    loaded = loader.load(source, "reference")
    try:
        namespace = loaded.module.__dict__
        exec(compile(subclass_source(graph), "<captured>", "exec"), namespace)
        outputs = []
        for cls in (namespace["Model"], namespace["Captured"]):
            torch.manual_seed(SEED)
            model = cls(*namespace["get_init_inputs"]())
            args = inputs_mod.make(namespace["get_inputs"], SEED, "uniform", torch.device("cpu"))
            outputs.append(verify.flatten(verify.call(model, args, torch.device("cpu"), SEED)))
        expected, got = outputs
        testcase.assertEqual(len(expected), len(got))
        for e, g in zip(expected, got):
            testcase.assertTrue(verify.bitwise_equal(e, g), "%r != %r\n%s" % (e, g, subclass_source(graph)))
    finally:
        loaded.unload()


def by_name(graph):
    return {n["name"]: n for n in graph["nodes"]}


def summary(graph):
    return [(n["name"], n["op"], n["target"], n["kind"], n["code"]) for n in graph["nodes"]]


def meta(shape, stride, dtype="float32"):
    return {"shape": shape, "stride": stride, "dtype": dtype}


CONV_RELU_BIAS = reference('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, kernel_size=3, padding=1)
            self.bias = nn.Parameter(torch.randn(4, 1, 1))

        def forward(self, x):
            return torch.relu(self.conv(x) + self.bias)
''', "[torch.rand(2, 3, 8, 8)]")


class ConvReluBiasTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.graph = capture(CONV_RELU_BIAS)

    def test_nodes_in_execution_order(self):
        self.assertEqual(self.graph["method"], "fx")
        self.assertIsNone(self.graph["fallback"])
        self.assertEqual(summary(self.graph), [
            ("x", "placeholder", "x", "input", "x"),
            ("conv", "call_module", "conv", "conv2d", "self.conv(x)"),
            ("bias", "get_attr", "bias", "attr", "self.bias"),
            ("add", "call_function", "operator.add", "add", "conv + bias"),
            ("relu", "call_function", "torch.relu", "relu", "torch.relu(add)"),
            ("output", "output", "output", "output", "relu"),
        ])

    def test_args_users_and_normalized(self):
        nodes = by_name(self.graph)
        self.assertEqual(nodes["add"]["args"], [{"node": "conv"}, {"node": "bias"}])
        self.assertEqual(nodes["add"]["kwargs"], {})
        self.assertEqual(nodes["relu"]["normalized"], {"input": {"node": "add"}})
        self.assertEqual(nodes["conv"]["normalized"], {"input": {"node": "x"}})
        self.assertIsNone(nodes["x"]["normalized"])
        self.assertEqual(nodes["x"]["users"], ["conv"])
        self.assertEqual(nodes["add"]["users"], ["relu"])
        self.assertEqual(nodes["relu"]["users"], ["output"])
        self.assertEqual(nodes["output"]["users"], [])
        self.assertEqual(nodes["output"]["args"], [{"node": "relu"}])

    def test_metas(self):
        nodes = by_name(self.graph)
        self.assertEqual(nodes["x"]["meta"], meta([2, 3, 8, 8], [192, 64, 8, 1]))
        self.assertEqual(nodes["conv"]["meta"], meta([2, 4, 8, 8], [256, 64, 8, 1]))
        self.assertEqual(nodes["bias"]["meta"], meta([4, 1, 1], [1, 1, 1]))
        self.assertEqual(nodes["output"]["meta"], meta([2, 4, 8, 8], [256, 64, 8, 1]))
        self.assertNotIn("tuple_meta", nodes["relu"])

    def test_flops_and_bytes(self):
        nodes = by_name(self.graph)
        # conv: 2 * 512 outputs * 3 in-channels * 9 taps; x 1536 B + weight 432 B + bias 16 B + out 2048 B.
        self.assertEqual((nodes["conv"]["flops"], nodes["conv"]["bytes"]), (27648, 4032))
        self.assertEqual((nodes["add"]["flops"], nodes["add"]["bytes"]), (512, 2048 + 16 + 2048))
        self.assertEqual((nodes["relu"]["flops"], nodes["relu"]["bytes"]), (512, 4096))
        for name in ("x", "bias", "output"):
            self.assertEqual((nodes[name]["flops"], nodes[name]["bytes"]), (0, 0))
        self.assertEqual(self.graph["total_flops"], 27648 + 512 + 512)
        self.assertEqual(self.graph["total_bytes"], 4032 + 4112 + 4096)

    def test_each_call_node_has_its_measured_time(self):
        nodes = by_name(self.graph)
        for name in ("conv", "add", "relu"):  # CPU time a call, in ms: measured, so only its presence and sign
            self.assertGreater(nodes[name]["time_ms"], 0.0, name)
        for name in ("x", "bias", "output"):  # inputs, attributes and the output run no op
            self.assertNotIn("time_ms", nodes[name])

    def test_times_are_left_out_when_the_graph_cannot_run_under_the_profiler(self):
        from hiera_runner import graph_timing
        gm = torch.fx.symbolic_trace(torch.nn.Linear(4, 4))
        self.assertEqual(graph_timing.node_times(gm, [torch.randn(2, 5)]), {})  # the wrong width: it raises inside
        self.assertEqual(set(graph_timing.node_times(gm, [torch.randn(2, 4)])), {"linear"})

    def test_module_description(self):
        g = self.graph
        self.assertEqual(g["class_name"], "Model")
        self.assertEqual(g["forward_params"], ["x"])
        self.assertTrue(g["training"])
        self.assertEqual(g["submodules"], {"conv": {"type": "Conv2d", "attrs": {
            "in_channels": 3, "out_channels": 4, "kernel_size": [3, 3], "stride": [1, 1], "padding": [1, 1],
            "dilation": [1, 1], "groups": 1, "bias": True, "padding_mode": "zeros"}}})
        self.assertEqual(g["parameters"], {"bias": {"shape": [4, 1, 1], "dtype": "float32"},
                                           "conv.weight": {"shape": [4, 3, 3, 3], "dtype": "float32"},
                                           "conv.bias": {"shape": [4], "dtype": "float32"}})
        self.assertEqual(g["buffers"], {})

    def test_codes_reproduce_the_output(self):
        replay(self, CONV_RELU_BIAS, self.graph)


LINEAR_GELU = reference('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 16, bias=False)
            self.act = nn.GELU(approximate='tanh')

        def forward(self, x):
            a = F.gelu(self.fc(x))
            b = torch.nn.functional.gelu(a, approximate='tanh')
            c = b.relu()
            d = F.relu(c)
            return self.act(d).add(1.0)
''', "[torch.rand(2, 8)]")


class SpellingsTest(unittest.TestCase):
    def test_functional_method_and_module_spellings_share_kinds(self):
        g = capture(LINEAR_GELU)
        self.assertEqual(summary(g), [
            ("x", "placeholder", "x", "input", "x"),
            ("fc", "call_module", "fc", "linear", "self.fc(x)"),
            ("gelu", "call_function", "torch.nn.functional.gelu", "gelu", "torch.nn.functional.gelu(fc)"),
            ("gelu_1", "call_function", "torch.nn.functional.gelu", "gelu",
             "torch.nn.functional.gelu(gelu, approximate='tanh')"),
            ("relu", "call_method", "relu", "relu", "gelu_1.relu()"),
            ("relu_1", "call_function", "torch.nn.functional.relu", "relu",
             "torch.nn.functional.relu(relu, inplace=False)"),
            ("act", "call_module", "act", "gelu", "self.act(relu_1)"),
            ("add", "call_method", "add", "add", "act.add(1.0)"),
            ("output", "output", "output", "output", "add"),
        ])
        nodes = by_name(g)
        self.assertEqual(nodes["gelu_1"]["kwargs"], {"approximate": {"str": "tanh"}})
        self.assertEqual(nodes["gelu_1"]["normalized"], {"input": {"node": "gelu"}, "approximate": {"str": "tanh"}})
        self.assertEqual(nodes["add"]["args"], [{"node": "act"}, 1.0])
        self.assertIsInstance(nodes["add"]["args"][1], float)  # 1.0 stays a float, not 1
        # linear: 2 * (2 x 16 outputs) * 8; x 64 B + weight 512 B + out 128 B.
        self.assertEqual((nodes["fc"]["flops"], nodes["fc"]["bytes"]), (512, 704))
        self.assertEqual(g["submodules"]["fc"]["attrs"], {"in_features": 8, "out_features": 16, "bias": False})
        self.assertEqual(g["submodules"]["act"], {"type": "GELU", "attrs": {"approximate": "tanh"}})
        replay(self, LINEAR_GELU, g)


REDUCTION = reference('''
    class Model(nn.Module):
        def forward(self, x):
            s = x.sum(dim=1, keepdim=True)
            m = torch.mean(x, dim=(1, 2))
            return s / m[:, None, None]
''', "[torch.rand(4, 5, 6)]")


class ReductionTest(unittest.TestCase):
    def test_dims_keepdim_and_costs(self):
        g = capture(REDUCTION)
        self.assertEqual([n["code"] for n in g["nodes"]],
                         ["x", "x.sum(dim=1, keepdim=True)", "torch.mean(x, dim=(1, 2))", "mean[:, None, None]",
                          "sum_1 / getitem", "truediv"])
        nodes = by_name(g)
        self.assertEqual(nodes["sum_1"]["kind"], "sum")
        self.assertEqual(nodes["sum_1"]["kwargs"], {"dim": 1, "keepdim": True})
        self.assertEqual(nodes["sum_1"]["normalized"],
                         {"input": {"node": "x"}, "dim": 1, "keepdim": True, "dtype": None})
        self.assertEqual(nodes["mean"]["kwargs"], {"dim": {"list": [1, 2]}})
        self.assertEqual(nodes["mean"]["normalized"],
                         {"input": {"node": "x"}, "dim": {"list": [1, 2]}, "keepdim": False, "dtype": None})
        self.assertEqual(nodes["sum_1"]["meta"], meta([4, 1, 6], [6, 6, 1]))
        self.assertEqual(nodes["mean"]["meta"], meta([4], [1]))
        # Reductions: 1 flop per input element; bytes: 480 B read + the output.
        self.assertEqual((nodes["sum_1"]["flops"], nodes["sum_1"]["bytes"]), (120, 480 + 96))
        self.assertEqual((nodes["mean"]["flops"], nodes["mean"]["bytes"]), (120, 480 + 16))
        self.assertEqual((nodes["getitem"]["flops"], nodes["getitem"]["bytes"]), (0, 0))  # a view
        self.assertEqual((nodes["truediv"]["kind"], nodes["truediv"]["flops"], nodes["truediv"]["bytes"]),
                         ("div", 24, 96 + 16 + 96))
        replay(self, REDUCTION, g)


STENCIL = reference('''
    class Model(nn.Module):
        def forward(self, x):
            return x[:, 1:-1] * 2.0 - x[:, :-2] - x[:, 2:]
''', "[torch.rand(3, 10)]")


class StencilTest(unittest.TestCase):
    def test_slices_are_args_and_subscripts(self):
        g = capture(STENCIL)
        self.assertEqual([n["code"] for n in g["nodes"]],
                         ["x", "x[:, 1:-1]", "getitem * 2.0", "x[:, :-2]", "mul - getitem_1", "x[:, 2:]",
                          "sub - getitem_2", "sub_1"])
        nodes = by_name(g)
        self.assertEqual(nodes["getitem"]["args"],
                         [{"node": "x"}, {"list": [{"slice": [None, None, None]}, {"slice": [1, -1, None]}]}])
        self.assertEqual(nodes["getitem_2"]["args"][1],
                         {"list": [{"slice": [None, None, None]}, {"slice": [2, None, None]}]})
        self.assertEqual(nodes["getitem"]["meta"], meta([3, 8], [10, 1]))  # a strided view of x
        self.assertEqual([nodes[n]["kind"] for n in ("getitem", "mul", "sub", "sub_1")],
                         ["getitem", "mul", "sub", "sub"])
        self.assertEqual((nodes["mul"]["flops"], nodes["mul"]["bytes"]), (24, 96 + 96))
        self.assertEqual((nodes["sub"]["flops"], nodes["sub"]["bytes"]), (24, 96 * 3))
        self.assertEqual(g["total_flops"], 72)
        replay(self, STENCIL, g)

    def test_ellipsis_none_and_steps(self):
        source = reference('''
            class Model(nn.Module):
                def forward(self, x):
                    return x[..., None, ::2], x[0], x[1:, -1]
        ''', "[torch.rand(4, 6)]")
        g = capture(source)
        self.assertEqual([n["code"] for n in g["nodes"]],
                         ["x", "x[..., None, ::2]", "x[0]", "x[1:, -1]", "(getitem, getitem_1, getitem_2)"])
        self.assertEqual(by_name(g)["getitem"]["args"][1],
                         {"list": [{"ellipsis": True}, None, {"slice": [None, None, 2]}]})
        self.assertEqual(by_name(g)["getitem"]["meta"], meta([4, 1, 3], [6, 6, 2]))
        replay(self, source, g)


SOFTMAX = reference('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.softmax = nn.Softmax(dim=1)

        def forward(self, x):
            return torch.softmax(x, dim=-1) + F.log_softmax(x, dim=1) + self.softmax(x)
''', "[torch.rand(4, 16)]")


class SoftmaxTest(unittest.TestCase):
    def test_softmax_spellings(self):
        g = capture(SOFTMAX)
        nodes = by_name(g)
        self.assertEqual([(n["name"], n["kind"]) for n in g["nodes"] if "softmax" in n["name"]],
                         [("softmax", "softmax"), ("log_softmax", "log_softmax"), ("softmax_1", "softmax")])
        self.assertEqual(nodes["softmax"]["code"], "torch.softmax(x, dim=-1)")
        self.assertEqual(nodes["softmax_1"]["code"], "self.softmax(x)")
        # F.log_softmax hands fx every keyword it has (_stacklevel=3, dtype=None in torch 1.13).
        self.assertTrue(nodes["log_softmax"]["code"].startswith("torch.nn.functional.log_softmax(x, dim=1"))
        self.assertEqual(nodes["softmax"]["normalized"], {"input": {"node": "x"}, "dim": -1, "dtype": None})
        for name in ("softmax", "log_softmax", "softmax_1"):
            self.assertEqual((nodes[name]["flops"], nodes[name]["bytes"]), (5 * 64, 256 + 256))
        self.assertEqual(g["submodules"]["softmax"], {"type": "Softmax", "attrs": {"dim": 1}})
        replay(self, SOFTMAX, g)


ATTRS = reference('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(4, 4))
            self.register_buffer("scale", torch.full((4,), 0.5))
            self.register_buffer("shift", torch.ones(4), persistent=False)

        def forward(self, x):
            return torch.matmul(x, self.weight) * self.scale + self.shift
''', "[torch.rand(3, 4)]")


class AttrTest(unittest.TestCase):
    def test_parameters_and_buffers_are_get_attr_nodes(self):
        g = capture(ATTRS)
        self.assertEqual(summary(g), [
            ("x", "placeholder", "x", "input", "x"),
            ("weight", "get_attr", "weight", "attr", "self.weight"),
            ("matmul", "call_function", "torch.matmul", "matmul", "torch.matmul(x, weight)"),
            ("scale", "get_attr", "scale", "attr", "self.scale"),
            ("mul", "call_function", "operator.mul", "mul", "matmul * scale"),
            ("shift", "get_attr", "shift", "attr", "self.shift"),
            ("add", "call_function", "operator.add", "add", "mul + shift"),
            ("output", "output", "output", "output", "add"),
        ])
        self.assertEqual(g["parameters"], {"weight": {"shape": [4, 4], "dtype": "float32"}})
        self.assertEqual(g["buffers"], {"scale": {"shape": [4], "dtype": "float32", "persistent": True},
                                        "shift": {"shape": [4], "dtype": "float32", "persistent": False}})
        nodes = by_name(g)
        # matmul (3x4)(4x4): 2*M*N*K = 96; x 48 B + weight 64 B + out 48 B.
        self.assertEqual((nodes["matmul"]["flops"], nodes["matmul"]["bytes"]), (96, 160))
        self.assertEqual(nodes["weight"]["meta"], meta([4, 4], [4, 1]))
        replay(self, ATTRS, g)


TUPLE = reference('''
    class Model(nn.Module):
        def forward(self, x):
            values, indices = torch.max(x, dim=1)
            return values * 2.0, indices
''', "[torch.rand(3, 5)]")


class TupleTest(unittest.TestCase):
    def test_tuple_results_have_tuple_meta(self):
        g = capture(TUPLE)
        self.assertEqual([n["code"] for n in g["nodes"]],
                         ["x", "torch.max(x, dim=1)", "max_1[0]", "max_1[1]", "getitem * 2.0", "(mul, getitem_1)"])
        nodes = by_name(g)
        self.assertIsNone(nodes["max_1"]["meta"])
        self.assertEqual(nodes["max_1"]["tuple_meta"], [meta([3], [1]), meta([3], [1], "int64")])
        self.assertEqual(nodes["max_1"]["normalized"], {"input": {"node": "x"}, "dim": 1, "keepdim": False})
        # 15 elements read; 60 B in, 12 B values + 24 B indices out.
        self.assertEqual((nodes["max_1"]["flops"], nodes["max_1"]["bytes"]), (15, 96))
        self.assertEqual(nodes["getitem_1"]["meta"], meta([3], [1], "int64"))
        self.assertEqual(nodes["output"]["args"], [{"list": [{"node": "mul"}, {"node": "getitem_1"}]}])
        self.assertIsNone(nodes["output"]["meta"])
        self.assertEqual(nodes["output"]["tuple_meta"], [meta([3], [1]), meta([3], [1], "int64")])
        replay(self, TUPLE, g)


SHAPE_UNPACKING = reference('''
    class Model(nn.Module):
        def forward(self, x):
            B, T, C = x.shape
            return x.reshape(B * T, C) * T
''', "[torch.rand(2, 3, 4)]")


class ShapeUnpackingTest(unittest.TestCase):
    def test_a_shape_attribute_unpacks_into_its_sizes(self):
        # The tensor's .shape is an attribute proxy: it unpacks like a call's tuple (torch.max above).
        g = capture(SHAPE_UNPACKING)
        self.assertIsNone(g["fallback"])
        self.assertEqual([n["code"] for n in g["nodes"]],
                         ["x", "x.shape", "getattr_1[0]", "getattr_1[1]", "getattr_1[2]", "getitem * getitem_1",
                          "x.reshape(mul, getitem_2)", "reshape * getitem_1", "mul_1"])
        replay(self, SHAPE_UNPACKING, g)


SIZED_FACTORIES = reference('''
    class Model(nn.Module):
        def forward(self, x):
            T = x.size(-1)
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), 1)
            return x.masked_fill(mask, 0.0) + torch.arange(T, device=x.device)
''', "[torch.rand(2, 4, 4)]")


class SizedFactoriesTest(unittest.TestCase):
    def test_factories_of_a_traced_size_are_nodes(self):
        # torch.ones(T, T) rejects a Proxy for T: the capture makes the call a node, as fx does for math.sqrt.
        g = capture(SIZED_FACTORIES)
        self.assertIsNone(g["fallback"])
        codes = [n["code"] for n in g["nodes"]]
        self.assertEqual(codes[:5], ["x", "x.size(-1)", "x.device", "torch.ones(size, size, dtype=torch.bool, "
                                     "device=getattr_1)", "torch.triu(ones, 1)"])
        self.assertIn("torch.arange(size, device=getattr_2)", codes)
        self.assertEqual(by_name(g)["triu"]["facts"]["mask"], "causal_masked")
        # Afterwards the factories are torch's own builtins again, not the capture's wrappers.
        for name in ("ones", "zeros", "full", "empty", "arange", "eye", "linspace"):
            self.assertEqual(type(getattr(torch, name)).__name__, "builtin_function_or_method", name)
        replay(self, SIZED_FACTORIES, g)


DTYPE_LIMITS = reference('''
    class Model(nn.Module):
        def forward(self, x):
            lowest = torch.tensor(torch.finfo(x.dtype).min, dtype=x.dtype, device=x.device)
            return torch.where(x > 0, x, lowest)
''', "[torch.randn(4, 8)]")


class TracedDtypeLimitsTest(unittest.TestCase):
    def test_the_limits_of_a_traced_dtype_and_a_tensor_of_them_are_nodes(self):
        finfo, tensor = torch.finfo, torch.tensor
        g = capture(DTYPE_LIMITS)
        self.assertIsNone(g["fallback"])
        self.assertEqual([n["code"] for n in g["nodes"]][1:6], [
            "x.dtype", "torch.finfo(getattr_1)", "finfo.min", "x.dtype", "x.device"])
        nodes = by_name(g)
        self.assertEqual(nodes["tensor"]["code"], "torch.tensor(getattr_2, dtype=getattr_3, device=getattr_4)")
        self.assertEqual(nodes["tensor"]["facts"]["values"], [torch.finfo(torch.float32).min])
        # Afterwards torch.finfo and torch.tensor are torch's own again.
        self.assertIs(torch.finfo, finfo)
        self.assertIs(torch.tensor, tensor)
        replay(self, DTYPE_LIMITS, g)


PAD_TO_SKIP = reference('''
    class Model(nn.Module):
        def forward(self, x, skip):
            dh = skip.size(2) - x.size(2)
            dw = skip.size(3) - x.size(3)
            x = F.pad(x, [dw // 2, dw - dw // 2, dh // 2, dh - dh // 2])
            return torch.cat([skip, x], dim=1)
''', "[torch.rand(1, 2, 5, 6), torch.rand(1, 3, 8, 8)]")


class TracedPadTest(unittest.TestCase):
    def test_a_pad_to_a_traced_size_is_a_node(self):
        pad = F.pad
        g = capture(PAD_TO_SKIP)
        self.assertIsNone(g["fallback"])
        self.assertEqual(by_name(g)["pad"]["code"],
                         "torch.nn.functional.pad(x, [floordiv, sub_2, floordiv_2, sub_3])")
        self.assertEqual(by_name(g)["pad"]["meta"]["shape"], [1, 2, 8, 8])
        self.assertIs(F.pad, pad)
        replay(self, PAD_TO_SKIP, g)


WINDOWS_BACK = reference('''
    def merge(windows, size, h, w):
        b = int(windows.shape[0] / (h * w / size / size))
        x = windows.view(b, h // size, w // size, size, size, -1)
        return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, -1)


    class Model(nn.Module):
        def forward(self, windows):
            if not isinstance(3, int) or not isinstance(True, int) or not issubclass(bool, int):
                raise AssertionError("isinstance(..., int) changed while tracing")
            return merge(windows, 2, 4, 6) * int(2.7)
''', "[torch.rand(12, 2, 2, 3)]")


class TracedIntTest(unittest.TestCase):
    def test_int_of_a_traced_size_is_a_node_and_int_is_int_again_afterwards(self):
        g = capture(WINDOWS_BACK)
        self.assertIsNone(g["fallback"])
        self.assertEqual(g["method"], "fx")
        self.assertEqual(by_name(g)["int_1"]["code"], "int(truediv)")  # h * w / size / size: a Python number, folded
        self.assertEqual(by_name(g)["view"]["code"], "windows.view(int_1, 2, 3, 2, 2, -1)")
        self.assertEqual(by_name(g)["view_1"]["meta"]["shape"], [2, 4, 6, 3])
        replay(self, WINDOWS_BACK, g)

    def test_a_module_that_binds_int_itself_keeps_it(self):
        source = WINDOWS_BACK.replace("import torch\n", "import torch\nint = int\n", 1)
        self.assertIn("int = int", source)
        g = capture(source)
        self.assertIn("int() argument must be", g["fallback"])


CONTAINERS = reference('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.blocks = nn.ModuleDict({"first-block": nn.Tanh()})

        def forward(self, x):
            return self.blocks["first-block"](self.seq(x)) + torch.tensor([1.0, 2.0, 3.0, 4.0])
''', "[torch.rand(2, 4)]")


class ContainersTest(unittest.TestCase):
    def test_container_paths_and_constants(self):
        g = capture(CONTAINERS)
        self.assertEqual(summary(g), [
            ("x", "placeholder", "x", "input", "x"),
            ("seq_0", "call_module", "seq.0", "linear", "self.seq[0](x)"),
            ("seq_1", "call_module", "seq.1", "relu", "self.seq[1](seq_0)"),
            ("blocks_first_block", "call_module", "blocks.first-block", "tanh", "self.blocks['first-block'](seq_1)"),
            ("_tensor_constant0", "get_attr", "_tensor_constant0", "attr",
             "torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float32)"),
            ("add", "call_function", "operator.add", "add", "blocks_first_block + _tensor_constant0"),
            ("output", "output", "output", "output", "add"),
        ])
        self.assertEqual(g["submodules"]["seq"], {"type": "Sequential", "attrs": {}})
        self.assertEqual(g["submodules"]["blocks.first-block"], {"type": "Tanh", "attrs": {}})
        replay(self, CONTAINERS, g)


ATTENTION = reference('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
            self.norm = nn.LayerNorm(8)
            self.pool = nn.MaxPool1d(2)

        def forward(self, x):
            a, _ = self.attn(x, x, x)
            y = self.norm(a + x)
            return self.pool(y.transpose(1, 2))
''', "[torch.rand(2, 5, 8)]")

FUNCTIONAL_CONV = reference('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(4, 3, 3, 3))

        def forward(self, x):
            return F.avg_pool2d(F.conv2d(x, self.weight, padding=1), 2)
''', "[torch.rand(1, 3, 6, 6)]")


class LayersTest(unittest.TestCase):
    def test_self_attention_norm_and_pool(self):
        g = capture(ATTENTION)
        nodes = by_name(g)
        self.assertEqual([(n["name"], n["kind"]) for n in g["nodes"]], [
            ("x", "input"), ("attn", "multi_head_attention"), ("getitem", "getitem"), ("getitem_1", "getitem"),
            ("add", "add"), ("norm", "layer_norm"), ("transpose", "transpose"), ("pool", "max_pool1d"),
            ("output", "output")])
        self.assertEqual(nodes["attn"]["code"], "self.attn(x, x, x)")
        # batch_first: the output is a transposed view of the (L, N, E) result.
        self.assertEqual(nodes["attn"]["tuple_meta"], [meta([2, 5, 8], [8, 16, 1]), meta([2, 5, 5], [25, 5, 1])])
        # Four 8x8 projections of 2x5 tokens, then QK^T and AV per head (head_dim 4) and the softmax.
        self.assertEqual(nodes["attn"]["flops"], 2 * 2 * (5 * 64 * 4) + 2 * (2 * 2 * 2 * 5 * 5 * 4) + 5 * 2 * 2 * 25)
        # x read once though passed three times; in_proj 24x8 + bias 24, out_proj 8x8 + 8; both outputs.
        self.assertEqual(nodes["attn"]["bytes"], 320 + (192 + 24 + 64 + 8) * 4 + 320 + 200)
        self.assertEqual(nodes["norm"]["flops"], 8 * 80)
        self.assertEqual(nodes["pool"]["flops"], 2 * 8 * 2 * 2)  # 32 outputs, a window of 2
        self.assertEqual((nodes["transpose"]["flops"], nodes["transpose"]["bytes"]), (0, 0))
        self.assertEqual(g["submodules"]["attn"]["attrs"],
                         {"embed_dim": 8, "num_heads": 2, "dropout": 0.0, "batch_first": True, "bias": True,
                          "kdim": 8, "vdim": 8})
        self.assertEqual(g["submodules"]["attn.out_proj"]["attrs"], {"in_features": 8, "out_features": 8, "bias": True})
        self.assertEqual(g["submodules"]["pool"]["attrs"],
                         {"kernel_size": 2, "stride": 2, "padding": 0, "dilation": 1, "return_indices": False,
                          "ceil_mode": False})
        replay(self, ATTENTION, g)

    def test_functional_conv_and_pool(self):
        g = capture(FUNCTIONAL_CONV)
        self.assertEqual([n["code"] for n in g["nodes"]],
                         ["x", "self.weight", "torch.conv2d(x, weight, padding=1)",
                          "torch.nn.functional.avg_pool2d(conv2d, 2)", "avg_pool2d"])
        nodes = by_name(g)
        self.assertEqual(nodes["conv2d"]["kind"], "conv2d")
        self.assertEqual(nodes["avg_pool2d"]["kind"], "avg_pool2d")
        self.assertEqual((nodes["conv2d"]["flops"], nodes["conv2d"]["bytes"]), (144 * 27 * 2, 432 + 432 + 576))
        self.assertEqual((nodes["avg_pool2d"]["flops"], nodes["avg_pool2d"]["bytes"]), (36 * 4, 576 + 144))
        replay(self, FUNCTIONAL_CONV, g)


BATCH_NORM = reference('''
    class Model(nn.Module):
        def __init__(self, eval_mode):
            super().__init__()
            self.bn = nn.BatchNorm2d(4, eps=1e-3)
            if eval_mode:
                self.eval()

        def forward(self, x):
            return self.bn(x)
''', "[torch.rand(2, 4, 3, 3)]", init="[%s]")


class TrainingFlagTest(unittest.TestCase):
    def test_batch_norm_costs_follow_the_mode(self):
        train = capture(BATCH_NORM % "False")
        evaluate = capture(BATCH_NORM % "True")
        self.assertTrue(train["training"])
        self.assertFalse(evaluate["training"])
        # 72 elements: 8 flops each in training, 4 with running statistics.
        self.assertEqual(by_name(train)["bn"]["flops"], 8 * 72)
        self.assertEqual(by_name(evaluate)["bn"]["flops"], 4 * 72)
        # x 288 B + weight, bias, running mean and var 4 x 16 B + num_batches_tracked 8 B + out 288 B.
        self.assertEqual(by_name(evaluate)["bn"]["bytes"], 288 + 64 + 8 + 288)
        self.assertEqual(train["submodules"]["bn"]["attrs"],
                         {"num_features": 4, "eps": 1e-3, "momentum": 0.1, "affine": True, "track_running_stats": True})
        self.assertEqual(train["buffers"]["bn.num_batches_tracked"],
                         {"shape": [], "dtype": "int64", "persistent": True})
        replay(self, BATCH_NORM % "True", evaluate)


DATA_DEPENDENT = reference('''
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            if x.sum() > 0:
                return self.lin(x)
            return x
''', "[torch.rand(2, 4)]")


class FallbackTest(unittest.TestCase):
    def test_data_dependent_control_flow_gives_an_empty_graph_and_the_reason(self):
        g = capture(DATA_DEPENDENT)
        self.assertIsNone(g["method"])
        self.assertEqual(g["nodes"], [])
        self.assertTrue(g["fallback"].startswith(
            "forward has data-dependent control flow: TraceError: symbolically traced variables cannot be used as "
            "inputs to control flow"), g["fallback"])
        if hasattr(torch, "export"):
            self.assertIn("; torch.export failed too: ", g["fallback"])
        else:
            self.assertNotIn("torch.export", g["fallback"])
        self.assertEqual((g["total_flops"], g["total_bytes"]), (0, 0))
        # What does not need the trace is still there.
        self.assertEqual(g["forward_params"], ["x"])
        self.assertEqual(g["submodules"]["lin"]["type"], "Linear")
        self.assertEqual(sorted(g["parameters"]), ["lin.bias", "lin.weight"])

    @unittest.skipUnless(hasattr(getattr(torch, "export", None), "export"), "torch.export needs torch >= 2.1")
    def test_shape_dependent_control_flow_is_captured_by_export(self):
        source = reference('''
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(4, 4)

                def forward(self, x):
                    if x.shape[0] > 1:
                        return torch.relu(self.lin(x))
                    return x
        ''', "[torch.rand(2, 4)]")
        g = capture(source)
        self.assertEqual(g["method"], "export", g["fallback"])
        kinds = [n["kind"] for n in g["nodes"]]
        self.assertEqual(kinds[-1], "output")
        self.assertIn("relu", kinds)
        attrs = [n for n in g["nodes"] if n["kind"] == "attr"]
        self.assertEqual(sorted(n["code"] for n in attrs), ["self.lin.bias", "self.lin.weight"])
        replay(self, source, g)


RENAMED_PARAMETER = reference('''
    class Model(nn.Module):
        def forward(self, input, scale=2.0):
            return input * scale
''', "[torch.rand(3)]")


class PlaceholderTest(unittest.TestCase):
    def test_parameter_names_and_defaults(self):
        g = capture(RENAMED_PARAMETER)
        self.assertEqual(g["forward_params"], ["input", "scale"])
        self.assertEqual([(n["name"], n["target"], n["args"], n["code"]) for n in g["nodes"]], [
            ("input_1", "input", [], "input"),  # `input` is a builtin: fx renames the node, not the parameter
            ("scale", "scale", [2.0], "scale"),
            ("mul", "operator.mul", [{"node": "input_1"}, {"node": "scale"}], "input_1 * scale"),
            ("output", "output", [{"node": "mul"}], "mul")])
        self.assertIsNone(by_name(g)["scale"]["meta"])  # not a tensor
        replay(self, RENAMED_PARAMETER, g)


class CaptureJobTest(unittest.TestCase):
    def assertRefused(self, params, *words):
        with self.assertRaises(jsonrpc.RpcError) as caught:
            graph_capture.capture(params)
        self.assertEqual(caught.exception.code, jsonrpc.INVALID_PARAMS)
        for w in words:
            self.assertIn(w, caught.exception.message)
        return caught.exception.message

    def test_cuda_tasks_have_no_graph(self):
        cuda = {"kind": "cuda", "reference": {"source": "__global__ void k() {}"}}
        self.assertEqual(graph_capture.capture({"task": cuda}), {"graph": None})

    def test_bad_params(self):
        self.assertRefused([], "params must be an object")
        self.assertRefused({}, "params.task must be an object")
        self.assertRefused({"task": {"kind": "pytorch", "reference": {}}},
                           "params.task.reference.source must be a string")
        self.assertRefused({"task": {"kind": "pytorch", "reference": {"source": CONV_RELU_BIAS}}, "seed": "x"},
                           "params.seed must be an integer")

    def test_errors_in_the_reference_are_job_errors(self):
        self.assertRefused({"task": {"kind": "pytorch", "reference": {"source": "class Model(:\n"}}},
                           "the reference could not be loaded: SyntaxError", "reference line 1")
        broken_init = reference('''
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    raise ValueError("no width given")
        ''', "[torch.rand(2)]")
        self.assertRefused({"task": {"kind": "pytorch", "reference": {"source": broken_init}, "device": "cpu"}},
                           "the reference could not be constructed: ValueError: no width given", "reference line")
        broken_forward = reference('''
            class Model(nn.Module):
                def forward(self, x):
                    return x.view(7, -1)
        ''', "[torch.rand(2, 3)]")
        self.assertRefused({"task": {"kind": "pytorch", "reference": {"source": broken_forward}, "device": "cpu"}},
                           "the reference raised RuntimeError", "reference line")
        no_inputs = reference('''
            class Model(nn.Module):
                def forward(self, x):
                    return x
        ''', "[torch.rand(-1)]")
        self.assertRefused({"task": {"kind": "pytorch", "reference": {"source": no_inputs}, "device": "cpu"}},
                           "get_inputs() failed: RuntimeError")


class RunnerCaptureTest(unittest.TestCase):
    def test_the_runner_serves_capture(self):
        import test_runner_process
        runner = test_runner_process.Runner()
        try:
            reply = runner.call(1, "capture", {"task": {"kind": "pytorch", "device": "cpu",
                                                        "reference": {"source": CONV_RELU_BIAS}}})
            graph = reply["result"]["graph"]
            self.assertEqual(graph["method"], "fx")
            self.assertEqual([n["code"] for n in graph["nodes"]],
                             ["x", "self.conv(x)", "self.bias", "conv + bias", "torch.relu(add)", "relu"])
            reply = runner.call(2, "capture", {"task": {"kind": "pytorch", "reference": {"source": "class Model(:"}}})
            self.assertEqual(reply["error"]["code"], jsonrpc.INVALID_PARAMS)
            self.assertIn("SyntaxError", reply["error"]["message"])
        finally:
            runner.close()



class ExportSizeListsTest(unittest.TestCase):
    """torch.export writes a view's sizes as the numbers it saw; the generated
    code follows the source's sizes instead. An fx graph of aten operators
    stands in for an exported program (torch.export needs torch >= 2.1)."""

    def code_of(self, target, sizes, source_shape, *rest):
        g = torch.fx.Graph()
        x = g.placeholder("getitem_1")
        x.meta["val"] = torch.empty(source_shape)
        node = g.call_function(target, (x, sizes) + rest)
        capture = graph_capture.ExportCapture.__new__(graph_capture.ExportCapture)
        return capture.code(node)

    def test_view_reshape_and_expand_follow_the_source(self):
        aten = torch.ops.aten
        self.assertEqual(self.code_of(aten.view.default, [8, 1024, 12, 64], (8, 1024, 768)),
                         "torch.ops.aten.view.default(getitem_1, [getitem_1.shape[0], getitem_1.shape[1], 12, 64])")
        self.assertEqual(self.code_of(aten.reshape.default, [8192, 768], (8, 1024, 768)),
                         "torch.ops.aten.reshape.default(getitem_1, [-1, 768])")
        self.assertEqual(self.code_of(aten.expand.default, [8, 12, 1024], (8, 1, 1024), False),
                         "torch.ops.aten.expand.default(getitem_1, [getitem_1.shape[0], 12, 1024], False)")

    def test_other_operators_keep_their_arguments(self):
        self.assertEqual(self.code_of(torch.ops.aten.sum.dim_IntList, [1], (8, 4)),
                         "torch.ops.aten.sum.dim_IntList(getitem_1, [1])")


if __name__ == "__main__":
    unittest.main()
