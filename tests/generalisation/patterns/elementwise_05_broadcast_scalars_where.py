# eager on H200, estimated: ~4 ms (537 MB activations and a 537 MB second input; per-channel scale, per-row shift, where on a sign test, mixed Python scalars: ~7 passes of ~1 GB; measured 2.7 ms eager, torch 2.11)
"""Mixed scalars and broadcasts: x * gamma (1, C, 1, 1) + shift (N, 1, 1, 1) input, a
torch.where on (x > 0) choosing between y and 0.2 * y (a leaky ReLU by hand), then
blended with a second input: 0.7 * out + 0.3 * skip - 1e-3."""
import torch
import torch.nn as nn

batch_size = 64
channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gamma = nn.Parameter(1 + 0.1 * torch.randn(1, channels, 1, 1))

    def forward(self, x, skip, shift):
        y = x * self.gamma + shift
        y = torch.where(y > 0, y, 0.2 * y)
        return 0.7 * y + 0.3 * skip - 1e-3


def get_inputs():
    return [torch.randn(batch_size, channels, height, width),
            torch.randn(batch_size, channels, height, width),
            torch.randn(batch_size, 1, 1, 1)]


def get_init_inputs():
    return [channels]
