"""Conv3d + LeakyReLU + per-channel bias add + clamp + GELU: a volumetric conv with a four-op epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 8
OUT_CHANNELS = 32
DEPTH = 32
HEIGHT = 128
WIDTH = 128

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 2, "OUT_CHANNELS": 4, "DEPTH": 6, "HEIGHT": 8, "WIDTH": 8}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3)
        self.channel_bias = nn.Parameter(torch.randn(out_channels, 1, 1, 1) * 0.1)

    def forward(self, x):
        x = F.leaky_relu(self.conv(x), negative_slope=0.2)
        x = x + self.channel_bias
        x = torch.clamp(x, min=-1.0, max=1.0)
        return F.gelu(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
