# eager on H200, estimated: ~4 ms (conv 64->128 3x3 on 64 x 128 x 128: 155 GFLOP TF32 in cuDNN ~1 ms; 537 MB output through bias add, hardtanh, scale, sigmoid gate ~4 passes of ~1 GB; measured 2.5 ms eager, torch 2.11)
"""Conv2d followed by a separate per-channel bias parameter, F.hardtanh, a scalar scale and
a sigmoid gate multiply: conv(x) + bias -> hardtanh(-1, 1) * s -> y * torch.sigmoid(y)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 64
out_channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)
        self.scale = scale

    def forward(self, x):
        y = self.conv(x) + self.bias
        y = F.hardtanh(y, min_val=-1.0, max_val=1.0) * self.scale
        return y * torch.sigmoid(y)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 2.0]
