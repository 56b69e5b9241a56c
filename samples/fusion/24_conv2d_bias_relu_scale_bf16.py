"""bfloat16 Conv2d + per-channel bias + ReLU + per-channel scale: a tensor-core conv with a channel epilogue."""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 160
WIDTH = 160

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 4, "OUT_CHANNELS": 8, "HEIGHT": 12, "WIDTH": 12}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1).to(torch.bfloat16)
        self.channel_bias = nn.Parameter((torch.randn(out_channels, 1, 1) * 0.1).to(torch.bfloat16))
        self.channel_scale = nn.Parameter((torch.rand(out_channels, 1, 1) + 0.5).to(torch.bfloat16))

    def forward(self, x):
        x = torch.relu(self.conv(x) + self.channel_bias)
        return x * self.channel_scale


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH).to(torch.bfloat16)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
