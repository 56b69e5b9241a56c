"""Conv2d + InstanceNorm2d + divide by a constant: per-(sample, channel) plane statistics after a conv."""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 16
OUT_CHANNELS = 64
HEIGHT = 256
WIDTH = 256

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 3, "OUT_CHANNELS": 8, "HEIGHT": 12, "WIDTH": 12}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, divisor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.divisor = divisor

    def forward(self, x):
        return self.norm(self.conv(x)) / self.divisor


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, 2.0]
