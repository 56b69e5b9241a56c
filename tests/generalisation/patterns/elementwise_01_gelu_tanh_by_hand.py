# eager on H200, estimated: ~5 ms (1 GB input; pow, mul, add, mul, tanh, add, mul, mul: ~8 passes of ~2 GB; measured 4.5 ms eager, torch 2.11)
"""GELU, tanh approximation, spelled out as in GPT-2 code:
0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))."""
import math

import torch
import torch.nn as nn

rows = 16384
cols = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
