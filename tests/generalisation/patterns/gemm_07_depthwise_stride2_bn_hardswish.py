# eager on H200, estimated: ~2.5 ms (64 x 240 x 112 x 112 input = 771 MB read once by a depthwise 5x5 conv of stride 2 into 193 MB, then batch norm and hardswish over it in eager's separate passes; not yet measured)
"""A MobileNetV3 downsampling depthwise stage: nn.Conv2d(C, C, 5, stride=2, padding=2,
groups=C, bias=False), nn.BatchNorm2d in eval mode with non-trivial statistics, nn.Hardswish."""
import torch
import torch.nn as nn

batch_size = 64
channels = 240
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 5, stride=2, padding=2, groups=channels, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.act = nn.Hardswish()
        with torch.no_grad():
            self.bn.running_mean.normal_(0, 0.1)
            self.bn.running_var.uniform_(0.5, 1.5)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.normal_(0, 0.1)
        self.eval()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
