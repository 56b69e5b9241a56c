"""graph_facts on real captures: the values of buffers and constants built in
__init__, and causal masks in every spelling that builds one (triu / tril,
bool / additive, in forward or as a buffer), none for values that depend on
forward's inputs."""

import unittest

import fixtures  # noqa: F401  (puts hiera_runner on sys.path)
from test_graph_capture import capture, reference


def facts(graph):
    return {n["name"]: n["facts"] for n in graph["nodes"] if "facts" in n}


MASK_MODULE = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("upper", torch.triu(torch.ones(4, 4), 1).bool())
        self.register_buffer("lower", torch.tril(torch.ones(1, 1, 4, 4)))
        self.register_buffer("additive", torch.triu(torch.full((4, 4), -1e9), 1))
        self.register_buffer("weights", torch.tensor([[0.5, -1.0], [2.0, 0.0]]))

    def forward(self, x):
        built = torch.ones_like(x).triu(1) > 0
        return (x.masked_fill(self.upper, 0) + x.masked_fill(self.lower == 0, 1) + self.additive
                + x.masked_fill(built, 2) + x @ self.weights.repeat(2, 2))
"""


class GraphFactsTest(unittest.TestCase):
    def test_masks_in_several_spellings_are_causal(self):
        found = facts(capture(reference(MASK_MODULE, "[torch.randn(4, 4)]")))
        masks = {name: f["mask"] for name, f in found.items() if "mask" in f}
        # Buffers are traced: `self.lower == 0` is the buffer (kept) and the comparison (masked).
        self.assertEqual(masks, {"upper": "causal_masked", "lower": "causal_kept", "eq": "causal_masked",
                                 "additive": "causal_additive", "gt": "causal_masked"})
        self.assertNotIn("mask", found["ones_like"])  # all ones: nothing masked
        self.assertNotIn("mask", found["triu"])       # ones above the diagonal: neither kept nor additive

    def test_small_buffers_carry_their_values(self):
        found = facts(capture(reference(MASK_MODULE, "[torch.randn(4, 4)]")))
        self.assertEqual(found["repeat"]["values"][:4], [0.5, -1.0, 0.5, -1.0])  # weights.repeat(2, 2)
        self.assertEqual(found["weights"]["values"], [0.5, -1.0, 2.0, 0.0])
        self.assertEqual(found["upper"]["values"][:5], [0, 1, 1, 1, 0])
        self.assertNotIn("mask", found["repeat"])

    def test_values_that_depend_on_inputs_have_no_facts(self):
        found = facts(capture(reference(MASK_MODULE, "[torch.randn(4, 4)]")))
        for name in ("masked_fill", "masked_fill_1", "add", "matmul", "x"):
            self.assertNotIn(name, found)

    def test_a_buffer_sliced_to_the_sequence_length_is_causal(self):
        # GPT-2 style: the mask is made for the longest sequence and cut to this one's in forward.
        source = reference("""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8))

    def forward(self, x):
        T = x.size(-1)
        return x.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
""", "[torch.randn(2, 3, 4, 4)]")
        graph = capture(source)
        self.assertIsNone(graph["fallback"])
        self.assertEqual([(n["name"], n["code"]) for n in graph["nodes"] if n["name"] in ("bias", "getitem", "eq")],
                         [("bias", "self.bias"), ("getitem", "bias[:, :, :size, :size]"), ("eq", "getitem == 0")])
        masks = {name: f["mask"] for name, f in facts(graph).items() if "mask" in f}
        self.assertEqual(masks, {"bias": "causal_kept", "getitem": "causal_kept", "eq": "causal_masked"})

    def test_a_buffer_read_in_control_flow_is_still_captured(self):
        # Traced, the buffer is a Proxy that `if` cannot read: the capture traces it as a plain tensor instead.
        source = reference("""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("enabled", torch.ones(()))

    def forward(self, x):
        if self.enabled > 0:
            return x * 2
        return x
""", "[torch.randn(4)]")
        graph = capture(source)
        self.assertIsNone(graph["fallback"])
        self.assertEqual([n["code"] for n in graph["nodes"] if n["op"] == "call_function"], ["x * 2"])

    def test_random_values_have_no_facts(self):
        source = reference("""
class Model(nn.Module):
    def forward(self, x):
        return x + torch.rand_like(x).triu(1)
""", "[torch.randn(4, 4)]")
        self.assertEqual(facts(capture(source)), {})


if __name__ == "__main__":
    unittest.main()
