"""graph_cost: flops and minimum bytes per kind, from shapes and dtypes."""

import unittest

import torch

import fixtures  # noqa: F401  (puts hiera_runner on sys.path)
from hiera_runner import graph_cost
from hiera_runner.graph_cost import Meta


def m(*shape, dtype=torch.float32, stride=None):
    if stride is None:
        stride, step = [], 1
        for d in reversed(shape):
            stride.insert(0, step)
            step *= d
    return Meta(tuple(shape), tuple(stride), dtype)


def flops(kind, operands, outputs, **kw):
    return graph_cost.flops(kind, operands, outputs, **kw)


class FlopsTest(unittest.TestCase):
    def test_products_count_2mnk(self):
        self.assertEqual(flops("linear", [m(4, 8), m(16, 8)], [m(4, 16)]), 2 * 4 * 16 * 8)
        self.assertEqual(flops("matmul", [m(3, 4), m(4, 5)], [m(3, 5)]), 2 * 3 * 5 * 4)
        self.assertEqual(flops("matmul", [m(4), m(4)], [m()]), 2 * 4)  # a dot product
        self.assertEqual(flops("bmm", [m(2, 3, 4), m(2, 4, 5)], [m(2, 3, 5)]), 2 * 30 * 4)
        self.assertEqual(flops("addmm", [m(5), m(3, 4), m(4, 5)], [m(3, 5)]), 2 * 15 * 4)
        self.assertEqual(flops("baddbmm", [m(2, 3, 5), m(2, 3, 7), m(2, 7, 5)], [m(2, 3, 5)]), 2 * 30 * 7)

    def test_einsum_counts_every_index_combination(self):
        scores = graph_cost.einsum_flops("bhqd,bhkd->bhqk", [m(2, 4, 16, 8), m(2, 4, 16, 8)])
        self.assertEqual(scores, 2 * 2 * 4 * 16 * 16 * 8)  # the same as q @ k^T
        self.assertEqual(graph_cost.einsum_flops("ij, jk -> ik", [m(3, 4), m(4, 5)]), 2 * 3 * 4 * 5)
        self.assertEqual(graph_cost.einsum_flops("bij,jk->bik", [m(1, 3, 4), m(4, 5)]), 2 * 3 * 4 * 5)
        # An index of 1 on one side broadcasts.
        self.assertEqual(graph_cost.einsum_flops("bi,bi->b", [m(6, 4), m(1, 4)]), 2 * 6 * 4)
        # Not counted: an ellipsis, sizes that disagree, one operand or a rank the equation does not name.
        self.assertEqual(graph_cost.einsum_flops("...ij,...jk->...ik", [m(3, 4), m(4, 5)]), 0)
        self.assertEqual(graph_cost.einsum_flops("ij,jk->ik", [m(3, 4), m(5, 5)]), 0)
        self.assertEqual(graph_cost.einsum_flops("ii->i", [m(3, 3)]), 0)
        self.assertEqual(graph_cost.einsum_flops("ij,jk->ik", [m(3, 4, 1), m(4, 5)]), 0)

    def test_convolutions(self):
        # 2 * outputs * Cin/groups * prod(kernel): the weight's shape[1:].
        self.assertEqual(flops("conv2d", [m(1, 3, 6, 6)], [m(1, 8, 4, 4)], weight_shape=(8, 3, 3, 3)), 2 * 128 * 27)
        self.assertEqual(flops("conv2d", [m(1, 4, 6, 6)], [m(1, 6, 4, 4)], weight_shape=(6, 2, 3, 3)), 2 * 96 * 18)
        self.assertEqual(flops("conv1d", [m(2, 4, 10)], [m(2, 4, 8)], weight_shape=(4, 4, 3)), 2 * 64 * 12)
        # Transposed: every input element scatters into Cout/groups * prod(kernel) outputs.
        self.assertEqual(flops("conv_transpose2d", [m(1, 4, 5, 5)], [m(1, 2, 7, 7)], weight_shape=(4, 2, 3, 3)),
                         2 * 100 * 18)
        self.assertEqual(flops("conv2d", [m(1, 3, 6, 6)], [m(1, 8, 4, 4)]), 0)  # no weight: unknown, not guessed

    def test_pools(self):
        self.assertEqual(flops("avg_pool2d", [m(1, 1, 4, 4)], [m(1, 1, 2, 2)], kernel_size=2), 4 * 4)
        self.assertEqual(flops("max_pool2d", [m(1, 1, 4, 6)], [m(1, 1, 2, 2)], kernel_size=(2, 3)), 4 * 6)
        self.assertEqual(flops("max_pool1d", [m(1, 1, 9)], [m(1, 1, 3)], kernel_size=3), 3 * 3)
        self.assertEqual(flops("adaptive_avg_pool2d", [m(2, 3, 8, 8)], [m(2, 3, 1, 1)]), 2 * 3 * 64)

    def test_elementwise_reductions_and_norms(self):
        self.assertEqual(flops("relu", [m(10)], [m(10)]), 10)
        self.assertEqual(flops("add", [m(4, 1), m(1, 5)], [m(4, 5)]), 20)  # per output element
        self.assertEqual(flops("sum", [m(4, 5)], [m(4)]), 20)  # per input element
        self.assertEqual(flops("amax", [m(4, 5)], [m(4, 1)]), 20)
        self.assertEqual(flops("softmax", [m(4, 5)], [m(4, 5)]), 5 * 20)
        self.assertEqual(flops("layer_norm", [m(4, 5)], [m(4, 5)]), 8 * 20)
        self.assertEqual(flops("batch_norm", [m(4, 5)], [m(4, 5)], training=True), 8 * 20)
        self.assertEqual(flops("batch_norm", [m(4, 5)], [m(4, 5)], training=False), 4 * 20)
        self.assertEqual(flops("dropout", [m(4, 5)], [m(4, 5)], training=True, dropout_p=0.5), 20)
        self.assertEqual(flops("dropout", [m(4, 5)], [m(4, 5)], training=False, dropout_p=0.5), 0)
        self.assertEqual(flops("view", [m(4, 5)], [m(20)]), 0)
        self.assertEqual(flops("unknown", [m(4, 5)], [m(20)]), 0)

    def test_attention(self):
        # q (2, 4, 8), k (2, 6, 8), v (2, 6, 16): QK^T + AV + softmax over the 2x4x6 scores.
        self.assertEqual(flops("scaled_dot_product_attention", [m(2, 4, 8), m(2, 6, 8), m(2, 6, 16)], [m(2, 4, 16)]),
                         2 * 2 * 4 * 6 * 8 + 2 * 2 * 4 * 6 * 16 + 5 * 2 * 4 * 6)
        # MultiheadAttention, E=8, 2 heads, (L=5, N=2, E): four projections + attention at head_dim 4.
        q = m(5, 2, 8)
        projections = 2 * 2 * (5 * 64 * 4)
        attention = 2 * (2 * 2 * 2 * 5 * 5 * 4) + 5 * 2 * 2 * 5 * 5
        self.assertEqual(flops("multi_head_attention", [q, q, q], [q],
                               attention={"embed_dim": 8, "num_heads": 2, "batch_first": False}),
                         projections + attention)
        batch_first = m(2, 5, 8)
        self.assertEqual(flops("multi_head_attention", [batch_first] * 3, [batch_first],
                               attention={"embed_dim": 8, "num_heads": 2, "batch_first": True}),
                         projections + attention)


class BytesTest(unittest.TestCase):
    def bytes(self, kind, operands, outputs, extra=0, **kw):
        distinct = [o for o in operands if o is not None]
        return graph_cost.bytes_moved(kind, distinct, operands, outputs, extra, **kw)

    def test_inputs_once_plus_outputs(self):
        self.assertEqual(self.bytes("add", [m(4, 5), m(5)], [m(4, 5)]), 80 + 20 + 80)
        self.assertEqual(self.bytes("relu", [m(10, dtype=torch.float16)], [m(10, dtype=torch.float16)]), 20 + 20)
        self.assertEqual(self.bytes("linear", [m(2, 4)], [m(2, 3)], extra=(12 + 3) * 4), 32 + 60 + 24)
        self.assertEqual(self.bytes("max", [m(3, 5)], [m(3), m(3, dtype=torch.int64)]), 60 + 12 + 24)

    def test_views_and_copies_that_do_not_happen(self):
        self.assertEqual(self.bytes("view", [m(4, 5)], [m(20)]), 0)
        self.assertEqual(self.bytes("getitem", [m(4, 5)], [m(5)]), 0)
        # A tensor among the indices gathers.
        self.assertEqual(self.bytes("getitem", [m(4, 5), m(3, dtype=torch.int64)], [m(3, 5)]), 80 + 24 + 60)
        self.assertEqual(self.bytes("contiguous", [m(4, 5)], [m(4, 5)]), 0)
        self.assertEqual(self.bytes("contiguous", [m(5, 4, stride=(1, 5))], [m(5, 4)]), 80 + 80)
        self.assertEqual(self.bytes("to", [m(10)], [m(10)]), 0)
        self.assertEqual(self.bytes("to", [m(10)], [m(10, dtype=torch.float16)]), 40 + 20)
        self.assertEqual(self.bytes("dropout", [m(10)], [m(10)], training=False, dropout_p=0.5), 0)
        self.assertEqual(self.bytes("dropout", [m(10)], [m(10)], training=True, dropout_p=0.5), 80)
        self.assertEqual(self.bytes("unknown", [m(10)], []), 0)  # x.size(0)
        self.assertEqual(self.bytes("input", [], [m(10)]), 0)

    def test_contiguity(self):
        self.assertTrue(graph_cost.is_contiguous(m(2, 3)))
        self.assertFalse(graph_cost.is_contiguous(m(3, 2, stride=(1, 3))))
        self.assertTrue(graph_cost.is_contiguous(m(4, 1, 3, stride=(3, 6, 1))))  # size-1 strides do not matter
        self.assertEqual(graph_cost.element_size(torch.bfloat16), 2)
        self.assertEqual(graph_cost.nbytes(m(2, 3, dtype=torch.int64)), 48)


if __name__ == "__main__":
    unittest.main()
