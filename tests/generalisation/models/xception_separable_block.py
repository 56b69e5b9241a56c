# eager on H200, estimated: ~4 ms (32 x 128 x 112 x 112 input = 205 MB; two separable convs (depthwise 3x3 then 1x1 128->256, 256->256: ~30 + 60 GFLOP fp32 ~2 ms), BN and ReLU passes over 411 MB tensors, a 3x3 max pool of stride 2 and a strided 1x1 shortcut with BN ~1.5 ms; not yet measured)
"""An Xception entry-flow block: ReLU, SeparableConv2d (a depthwise 3x3 written as
F.conv2d(x, self.depthwise, padding=1, groups=C) on a raw Parameter, then a pointwise
nn.Conv2d 1x1), BatchNorm2d, ReLU, a second SeparableConv2d and BatchNorm2d, MaxPool2d(3, 2, 1);
the shortcut is a strided 1x1 conv with BatchNorm2d; the two are added. BatchNorm in eval mode
(self.eval() in __init__) with non-trivial running statistics."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 256
height = 112
width = 112


class SeparableConv2d(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.depthwise = nn.Parameter(torch.randn(cin, 1, 3, 3) * (2.0 / 9) ** 0.5)
        self.pointwise = nn.Conv2d(cin, cout, 1, bias=False)
        self.groups = cin

    def forward(self, x):
        return self.pointwise(F.conv2d(x, self.depthwise, padding=1, groups=self.groups))


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.sep1 = SeparableConv2d(in_channels, out_channels)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.sep2 = SeparableConv2d(out_channels, out_channels)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.skip = nn.Conv2d(in_channels, out_channels, 1, stride=2, bias=False)
        self.skip_bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.normal_(0, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.normal_(0, 0.1)
        self.eval()

    def forward(self, x):
        y = F.relu(x)
        y = F.relu(self.bn1(self.sep1(y)))
        y = self.bn2(self.sep2(y))
        y = self.pool(y)
        return y + self.skip_bn(self.skip(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
