# eager on H200, estimated: ~4 ms (ConvTranspose2d 256->128 2x2 s2 to 128 x 128 (17 GFLOP); F.pad for odd sizes and torch.cat with a 16 x 128 x 128 x 128 skip (268 MB each); DoubleConv 256->128->128: 155 + 77 GFLOP TF32 ~1.5 ms; BN/ReLU ~0.7 ms; measured 1.9 ms eager, torch 2.11)
"""A UNet decoder step (milesial Pytorch-UNet style): Up = ConvTranspose2d(in, in // 2, 2,
stride 2) on the coarse map, F.pad to the skip's size (diffY / diffX, zero here), torch.cat([skip,
up], dim=1), DoubleConv. BatchNorm in eval mode (self.eval() in __init__)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 256
out_channels = 128
height = 64
width = 64


class DoubleConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
        self.conv = DoubleConv(in_channels, out_channels)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.normal_(0, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
        self.eval()  # inference: BatchNorm uses its running statistics

    def forward(self, x1, x2):
        x1 = self.up(x1)
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width),
            torch.randn(batch_size, in_channels // 2, height * 2, width * 2)]


def get_init_inputs():
    return [in_channels, out_channels]
