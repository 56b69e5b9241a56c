"""Conv2d + per-channel bias add + HardSwish + clamp + per-channel multiply: a conv epilogue with channel parameters."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 32
OUT_CHANNELS = 64
HEIGHT = 256
WIDTH = 256

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 4, "OUT_CHANNELS": 8, "HEIGHT": 12, "WIDTH": 12}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.channel_bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)
        self.channel_scale = nn.Parameter(torch.rand(out_channels, 1, 1) + 0.5)

    def forward(self, x):
        x = self.conv(x) + self.channel_bias
        x = F.hardswish(x)
        x = torch.clamp(x, min=-0.5, max=2.0)
        return x * self.channel_scale


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
