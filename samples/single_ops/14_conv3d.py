"""nn.Conv3d 16->32 channels, 3x3x3, padding 1, on a batch of volumes: a cuDNN 3D convolution."""
import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 16
OUT_CHANNELS = 32
DEPTH = 64
HEIGHT = 128
WIDTH = 128
KERNEL = 3

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 3, "OUT_CHANNELS": 4, "DEPTH": 6, "HEIGHT": 8, "WIDTH": 8}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel, padding=kernel // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
