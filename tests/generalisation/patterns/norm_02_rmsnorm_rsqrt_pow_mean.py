# eager on H200, estimated: ~2 ms (512 MB activations; pow, mean, add eps, rsqrt, multiply, scale ~5 passes of ~1 GB; measured 1.2 ms eager, torch 2.11)
"""RMSNorm as in most LLM code: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight."""
import torch
import torch.nn as nn

tokens = 32768
dim = 4096


class Model(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim]
