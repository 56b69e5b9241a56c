"""Conv3d + MaxPool3d + logsumexp over channels + ReLU: a volumetric conv reduced over its channels."""
import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 16
OUT_CHANNELS = 32
DEPTH = 32
HEIGHT = 64
WIDTH = 64

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 2, "OUT_CHANNELS": 4, "DEPTH": 4, "HEIGHT": 8, "WIDTH": 8}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool3d(2)

    def forward(self, x):
        x = self.pool(self.conv(x))
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
