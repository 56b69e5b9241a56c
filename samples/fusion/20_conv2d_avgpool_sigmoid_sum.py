"""Conv2d + AvgPool2d + Sigmoid + sum over channels and space: a conv reduced to one number per sample."""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 16
OUT_CHANNELS = 64
HEIGHT = 256
WIDTH = 256
POOL = 2

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 3, "OUT_CHANNELS": 8, "HEIGHT": 14, "WIDTH": 14}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, pool):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.pool = nn.AvgPool2d(pool)

    def forward(self, x):
        x = torch.sigmoid(self.pool(self.conv(x)))
        return torch.sum(x, dim=[1, 2, 3])


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, POOL]
