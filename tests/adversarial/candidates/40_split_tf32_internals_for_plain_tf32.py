# expect: failed static
# hiera's own 3xTF32 module switches TF32 around its product: handed the
# unsplit operands, its inner function is a plain TF32 GEMM that no rule of the
# candidate's text would see.
import torch
import torch.nn as nn
from hiera_runner import split_tf32 as fast


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        product = getattr(fast, "_tf32x3_product")
        y = product(torch.nn.functional.linear, x, self.lin.weight, self.lin.bias)
        return torch.relu(y) * 2.0
