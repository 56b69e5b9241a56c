"""Linear + scale + residual add + LayerNorm: the post-norm transformer output projection."""
import torch
import torch.nn as nn

TOKENS = 32768
HIDDEN = 1024

CPU_SIZES = {"TOKENS": 16, "HIDDEN": 32}


class Model(nn.Module):
    def __init__(self, hidden, scale):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.scale = scale

    def forward(self, x):
        return self.norm(self.proj(x) * self.scale + x)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, 0.5]
