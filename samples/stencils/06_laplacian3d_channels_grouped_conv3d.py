"""7-point Laplacian of 8 fields of 256^3 at once: F.conv3d with groups=channels and one fixed kernel per channel."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CHANNELS = 8
GRID = 256

CPU_SIZES = {"CHANNELS": 3, "GRID": 10}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        weight = torch.zeros(1, 1, 3, 3, 3)
        weight[0, 0, 1, 1, 1] = -6.0
        for d, h, w in ((0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2)):
            weight[0, 0, d, h, w] = 1.0
        self.channels = channels
        self.register_buffer("weight", weight.repeat(channels, 1, 1, 1, 1), persistent=False)

    def forward(self, x):
        return F.conv3d(x, self.weight, padding=1, groups=self.channels)


def get_inputs():
    return [torch.randn(1, CHANNELS, GRID, GRID, GRID)]


def get_init_inputs():
    return [CHANNELS]
