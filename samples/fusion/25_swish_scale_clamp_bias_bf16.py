"""bfloat16 Swish + scale + clamp + per-column bias on a large activation: a chain with a broadcast vector."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 16384
COLS = 32768

CPU_SIZES = {"ROWS": 32, "COLS": 64}


class Model(nn.Module):
    def __init__(self, cols, scale):
        super().__init__()
        self.bias = nn.Parameter((torch.randn(cols) * 0.1).to(torch.bfloat16))
        self.scale = scale

    def forward(self, x):
        x = F.silu(x) * self.scale
        x = torch.clamp(x, min=-4.0, max=4.0)
        return x + self.bias


def get_inputs():
    return [torch.randn(ROWS, COLS).to(torch.bfloat16)]


def get_init_inputs():
    return [COLS, 1.7]
