"""LLaMA-style MLP sublayer: RMSNorm, SwiGLU (silu(x W1) * (x W3)) W2, residual add; bias-free Linears."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 8192
HIDDEN = 1024
FFN = 2816

CPU_SIZES = {"TOKENS": 16, "HIDDEN": 32, "FFN": 48}


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Model(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.norm = RMSNorm(hidden)
        self.w1 = nn.Linear(hidden, ffn, bias=False)
        self.w3 = nn.Linear(hidden, ffn, bias=False)
        self.w2 = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, FFN]
