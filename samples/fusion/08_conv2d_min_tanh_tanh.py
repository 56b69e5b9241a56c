"""Conv2d + min over channels + tanh + tanh: a conv whose wide output is reduced to one channel right away."""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 16
OUT_CHANNELS = 64
HEIGHT = 256
WIDTH = 256

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 3, "OUT_CHANNELS": 8, "HEIGHT": 12, "WIDTH": 12}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)

    def forward(self, x):
        x = self.conv(x)
        x = torch.min(x, dim=1, keepdim=True)[0]
        return torch.tanh(torch.tanh(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
