# eager on H200, estimated: ~3 ms (16 x 64 x 256 x 256 input = 268 MB; max-pool to 128 x 128, two 3x3 convs 64->128->128: 39 + 77 GFLOP TF32 ~0.8 ms; 134 MB activations through BN and ReLU ~0.5 ms; measured 1.2 ms eager, torch 2.11)
"""A UNet encoder step (milesial Pytorch-UNet style): Down = nn.MaxPool2d(2) then DoubleConv
((Conv2d 3x3 no bias, BatchNorm2d, ReLU) x 2). BatchNorm in eval mode (self.eval() in __init__)."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 256
width = 256


class DoubleConv(nn.Module):
    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.normal_(0, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
        self.eval()  # inference: BatchNorm uses its running statistics

    def forward(self, x):
        return self.maxpool_conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
