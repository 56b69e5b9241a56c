"""nn.GroupNorm(32 groups) over an NCHW activation: per-(sample, group) statistics, then a per-channel affine."""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 256
GROUPS = 32
HEIGHT = 128
WIDTH = 128

CPU_SIZES = {"BATCH": 2, "CHANNELS": 16, "GROUPS": 4, "HEIGHT": 8, "WIDTH": 8}


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [GROUPS, CHANNELS]
