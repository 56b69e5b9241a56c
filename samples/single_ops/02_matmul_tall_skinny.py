"""C = A @ B with a tall-skinny A (M x K, K small) and a wide B: a short-K GEMM whose large output write matters."""
import torch
import torch.nn as nn

M = 16384
K = 128

CPU_SIZES = {"M": 96, "K": 8}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, M)]


def get_init_inputs():
    return []
