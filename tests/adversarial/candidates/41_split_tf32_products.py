# expect: passed
# The 3xTF32 products as the s2_split_tf32_gemm rewrite writes them: float32's
# accuracy (on the CPU torch's own product).
import torch
import torch.nn as nn
from hiera_runner import split_tf32 as _split_tf32


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        return torch.relu(_split_tf32.linear(x, self.lin.weight, self.lin.bias)) * 2.0
