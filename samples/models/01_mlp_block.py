"""Pre-norm transformer MLP block: LayerNorm, Linear 4x up, GELU, Linear down, residual add."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 16384
HIDDEN = 1024
FFN = 4096

CPU_SIZES = {"TOKENS": 16, "HIDDEN": 32, "FFN": 64}


class Model(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, ffn)
        self.down = nn.Linear(ffn, hidden)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, FFN]
