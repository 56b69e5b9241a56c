"""Seven scalar elementwise ops (mul, add, leaky_relu, clamp, sub, tanh, mul) on 1 GiB: the pure elementwise chain."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 8192
COLS = 32768

CPU_SIZES = {"ROWS": 32, "COLS": 64}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x * 2.0
        x = x + 1.0
        x = F.leaky_relu(x, negative_slope=0.01)
        x = torch.clamp(x, min=-1.0, max=1.0)
        x = x - 0.5
        x = torch.tanh(x)
        return x * 3.0


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
