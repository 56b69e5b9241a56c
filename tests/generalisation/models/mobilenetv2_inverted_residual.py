# eager on H200, estimated: ~4 ms (128 x 32 x 56 x 56 input, expand x6 to 192 channels: 308 MB hidden tensors through 1x1 conv, BN, ReLU6, depthwise 3x3, BN, ReLU6, 1x1 project, BN, residual ~10 passes of 0.3-0.6 GB; GEMM work small; measured 1.8 ms eager, torch 2.11)
"""A MobileNetV2 InvertedResidual (stride 1, expand ratio 6, residual): nn.Sequential of
Conv2d 1x1 - BatchNorm2d - ReLU6, depthwise Conv2d 3x3 (groups = hidden) - BatchNorm2d -
ReLU6, Conv2d 1x1 - BatchNorm2d; x + conv(x). BatchNorm in eval mode (self.eval() in __init__)."""
import torch
import torch.nn as nn

batch_size = 128
channels = 32
height = 56
width = 56
expand_ratio = 6


class Model(nn.Module):
    def __init__(self, inp, oup, expand_ratio):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = inp == oup
        self.conv = nn.Sequential(
            nn.Conv2d(inp, hidden, 1, 1, 0, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        )
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.normal_(0, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
        self.eval()  # inference: BatchNorm uses its running statistics

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, channels, expand_ratio]
