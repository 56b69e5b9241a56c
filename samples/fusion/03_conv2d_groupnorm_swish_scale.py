"""Conv2d + GroupNorm + Swish (x * sigmoid(x)) + scalar multiply: a conv epilogue with a norm inside the chain."""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 32
OUT_CHANNELS = 64
GROUPS = 16
HEIGHT = 128
WIDTH = 128

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 4, "OUT_CHANNELS": 8, "GROUPS": 4, "HEIGHT": 12, "WIDTH": 12}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.scale = scale

    def forward(self, x):
        x = self.norm(self.conv(x))
        x = x * torch.sigmoid(x)
        return x * self.scale


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS, 2.0]
