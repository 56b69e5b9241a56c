# eager on H200, estimated: ~4 ms (1 GB input; SiLU as x * torch.sigmoid(x) 2 passes, swish with a learned beta via 1 / (1 + exp(-beta x)) 4 passes, a final add: ~7 passes of ~2 GB; measured 4.5 ms eager, torch 2.11)
"""SiLU and a swish with a learnable per-feature beta, both spelled out:
x * torch.sigmoid(x) + x / (1 + torch.exp(-self.beta * x))."""
import torch
import torch.nn as nn

batch_size = 16384
features = 16384


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.beta = nn.Parameter(torch.ones(features) + 0.1 * torch.randn(features))

    def forward(self, x):
        silu = x * torch.sigmoid(x)
        swish = x / (1 + torch.exp(-self.beta * x))
        return silu + swish


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
