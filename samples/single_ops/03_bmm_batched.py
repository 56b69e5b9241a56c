"""C[b] = A[b] @ B[b] for a batch of fp32 matrices: batched GEMM (torch.bmm, strided-batched cuBLAS)."""
import torch
import torch.nn as nn

BATCH = 64
M = 1024
K = 512
N = 1024

CPU_SIZES = {"BATCH": 3, "M": 32, "K": 16, "N": 24}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
