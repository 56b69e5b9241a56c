"""ConvNeXt block: depthwise 7x7 conv, channels-last LayerNorm, Linear 4x, GELU, Linear, layer scale, residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 256
HEIGHT = 56
WIDTH = 56

CPU_SIZES = {"BATCH": 2, "CHANNELS": 16, "HEIGHT": 10, "WIDTH": 10}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.pwconv1 = nn.Linear(channels, 4 * channels)
        self.pwconv2 = nn.Linear(4 * channels, channels)
        # Layer scale as a trained network has it (ConvNeXt initialises it to 1e-6, which hides the MLP).
        self.gamma = nn.Parameter(torch.rand(channels) * 0.5 + 0.1)

    def forward(self, x):
        shortcut = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)  # NCHW -> NHWC: LayerNorm and the Linears act on channels
        x = self.pwconv2(F.gelu(self.pwconv1(self.norm(x))))
        x = (self.gamma * x).permute(0, 3, 1, 2)
        return shortcut + x


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
