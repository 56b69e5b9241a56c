"""graph_ops: every spelling of an op is the same kind; qualified names."""

import operator
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

import fixtures  # noqa: F401  (puts hiera_runner on sys.path)
from hiera_runner import graph_ops


class KindTest(unittest.TestCase):
    def test_relu_spellings(self):
        self.assertEqual(graph_ops.kind_of_function(torch.relu), "relu")
        self.assertEqual(graph_ops.kind_of_function(torch.relu_), "relu")
        self.assertEqual(graph_ops.kind_of_function(F.relu), "relu")
        self.assertEqual(graph_ops.kind_of_method("relu"), "relu")
        self.assertEqual(graph_ops.kind_of_method("relu_"), "relu")
        self.assertEqual(graph_ops.kind_of_module(nn.ReLU(inplace=True)), "relu")

    def test_add_spellings(self):
        for fn in (operator.add, operator.iadd, torch.add, torch.Tensor.add):
            self.assertEqual(graph_ops.kind_of_function(fn), "add", fn)
        for name in ("add", "add_", "__add__", "__radd__", "__iadd__"):
            self.assertEqual(graph_ops.kind_of_method(name), "add", name)

    def test_operators_and_views(self):
        self.assertEqual(graph_ops.kind_of_function(operator.truediv), "div")
        self.assertEqual(graph_ops.kind_of_function(operator.matmul), "matmul")
        self.assertEqual(graph_ops.kind_of_function(operator.getitem), "getitem")
        self.assertEqual(graph_ops.kind_of_function(operator.neg), "neg")
        self.assertEqual(graph_ops.kind_of_method("float"), "to")
        self.assertEqual(graph_ops.kind_of_method("t"), "transpose")
        self.assertEqual(graph_ops.kind_of_method("clamp_min"), "clamp")
        self.assertEqual(graph_ops.kind_of_method("size"), "unknown")
        self.assertEqual(graph_ops.kind_of_function(torch.mm), "matmul")
        self.assertEqual(graph_ops.kind_of_function(torch.cat), "cat")
        if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0
            self.assertEqual(graph_ops.kind_of_function(F.scaled_dot_product_attention),
                             "scaled_dot_product_attention")

    def test_modules_by_class_and_base_class(self):
        class MyConv(nn.Conv2d):
            pass

        class Block(nn.Module):
            pass

        self.assertEqual(graph_ops.kind_of_module(MyConv(3, 4, 3)), "conv2d")
        self.assertEqual(graph_ops.kind_of_module(nn.ConvTranspose3d(2, 2, 3)), "conv_transpose3d")
        self.assertEqual(graph_ops.kind_of_module(nn.ReLU6()), "hardtanh")
        self.assertEqual(graph_ops.kind_of_module(nn.InstanceNorm2d(4)), "instance_norm")
        self.assertEqual(graph_ops.kind_of_module(nn.MultiheadAttention(8, 2)), "multi_head_attention")
        self.assertEqual(graph_ops.kind_of_module(nn.Sequential()), "unknown")
        self.assertEqual(graph_ops.kind_of_module(Block()), "unknown")

    def test_a_user_function_named_like_an_op_is_unknown(self):
        def relu(x):
            return x
        self.assertEqual(graph_ops.kind_of_function(relu), "unknown")
        self.assertEqual(graph_ops.kind_of_function(getattr), "unknown")

    def test_aten_operators(self):
        aten = torch.ops.aten
        self.assertEqual(graph_ops.kind_of_aten(aten.relu.default), "relu")
        self.assertEqual(graph_ops.kind_of_aten(aten.addmm.default), "addmm")
        self.assertEqual(graph_ops.kind_of_aten(aten.mm.default), "matmul")
        self.assertEqual(graph_ops.kind_of_aten(aten._softmax.default), "softmax")
        self.assertEqual(graph_ops.kind_of_aten(aten.native_layer_norm.default), "layer_norm")
        self.assertEqual(graph_ops.kind_of_aten(aten.sum.dim_IntList), "sum")
        self.assertEqual(graph_ops.kind_of_aten(aten.convolution.default, weight_rank=4), "conv2d")
        self.assertEqual(graph_ops.kind_of_aten(aten.convolution.default, weight_rank=5, transposed=True),
                         "conv_transpose3d")
        self.assertEqual(graph_ops.kind_of_aten(aten.convolution.default), "unknown")

    def test_every_kind_produced_is_in_the_vocabulary(self):
        produced = set(graph_ops._NAME_KINDS.values()) | set(graph_ops._MODULE_KINDS.values()) | \
            set(graph_ops._ATEN_KINDS.values())
        self.assertEqual(produced - set(graph_ops.KINDS), set())
        self.assertEqual(len(graph_ops.KINDS), len(set(graph_ops.KINDS)))


class QualifiedNameTest(unittest.TestCase):
    def test_names(self):
        self.assertEqual(graph_ops.qualified_name(torch.relu), "torch.relu")
        self.assertEqual(graph_ops.qualified_name(F.gelu), "torch.nn.functional.gelu")
        self.assertEqual(graph_ops.qualified_name(F.relu), "torch.nn.functional.relu")
        self.assertEqual(graph_ops.qualified_name(operator.add), "operator.add")
        self.assertEqual(graph_ops.qualified_name(getattr), "getattr")
        # One function under two names: torch's wins.
        self.assertIs(F.conv2d, torch.conv2d)
        self.assertEqual(graph_ops.qualified_name(F.conv2d), "torch.conv2d")

        def helper(x):
            return x
        self.assertEqual(graph_ops.qualified_name(helper),
                         "test_graph_ops.QualifiedNameTest.test_names.<locals>.helper")


if __name__ == "__main__":
    unittest.main()
