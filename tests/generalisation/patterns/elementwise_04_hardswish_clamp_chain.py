# eager on H200, estimated: ~3 ms (537 MB activations; add, clamp_, mul_, div_, clamp, sub and abs: ~6 passes of ~1 GB; measured 2.5 ms eager, torch 2.11)
"""A hardswish spelled with clamp (x * (x + 3).clamp(0, 6) / 6, in place on a temporary),
then a clamp to [-1, 3] and a leaky correction: y - 0.1 * (y - 1).abs()."""
import torch
import torch.nn as nn

batch_size = 64
channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = x + 3.0
        y.clamp_(0.0, 6.0).mul_(x).div_(6.0)
        y = torch.clamp(y, min=-1.0, max=3.0)
        return y - 0.1 * (y - 1.0).abs()


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
