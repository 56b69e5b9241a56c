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
        # fx computes `self.lower == 0` while tracing: a constant, causal as the comparison was.
        self.assertEqual(masks, {"upper": "causal_masked", "_tensor_constant0": "causal_masked",
                                 "additive": "causal_additive", "gt": "causal_masked"})
        self.assertNotIn("mask", found["ones_like"])  # all ones: nothing masked
        self.assertNotIn("mask", found["triu"])       # ones above the diagonal: neither kept nor additive

    def test_small_buffers_carry_their_values(self):
        found = facts(capture(reference(MASK_MODULE, "[torch.randn(4, 4)]")))
        self.assertEqual(found["_tensor_constant1"]["values"][:4], [0.5, -1.0, 0.5, -1.0])  # weights.repeat(2, 2)
        self.assertEqual(found["upper"]["values"][:5], [0, 1, 1, 1, 0])
        self.assertNotIn("mask", found["_tensor_constant1"])

    def test_values_that_depend_on_inputs_have_no_facts(self):
        found = facts(capture(reference(MASK_MODULE, "[torch.randn(4, 4)]")))
        for name in ("masked_fill", "masked_fill_1", "add", "matmul", "x"):
            self.assertNotIn(name, found)

    def test_random_values_have_no_facts(self):
        source = reference("""
class Model(nn.Module):
    def forward(self, x):
        return x + torch.rand_like(x).triu(1)
""", "[torch.randn(4, 4)]")
        self.assertEqual(facts(capture(source)), {})


if __name__ == "__main__":
    unittest.main()
