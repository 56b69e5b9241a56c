# eager on H200, estimated: ~3 ms (128 x 24 x 56 x 56 input, expand x6 to 144 channels: 231 MB hidden tensors; 1x1 expand and project convs ~2 x 3.5 GFLOP; BN, SiLU, depthwise 5x5, BN, SiLU, the squeeze-excitation's pooling and scaling, BN and the residual ~12 passes of 0.2-0.25 GB, cuDNN's depthwise 5x5 slower than its bytes; not yet measured)
"""An EfficientNet-B0 MBConv block (expand ratio 6, kernel 5, stride 1, squeeze-excitation 0.25,
residual), written in the style of a model zoo: Conv2d 1x1 expand - BatchNorm2d - SiLU, depthwise
Conv2d 5x5 (groups = hidden) - BatchNorm2d - SiLU, squeeze-excitation (adaptive average pool,
Conv2d 1x1 reduce, SiLU, Conv2d 1x1 expand, sigmoid, multiply), Conv2d 1x1 project - BatchNorm2d,
identity add (drop connect is the identity in eval). BatchNorm in eval mode (self.eval() in
__init__) with non-trivial running statistics."""
import torch
import torch.nn as nn

batch_size = 128
in_channels = 24
height = 56
width = 56
expand_ratio = 6
kernel_size = 5


class SqueezeExcite(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.expand = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        s = self.pool(x)
        s = self.expand(nn.functional.silu(self.reduce(s)))
        return x * torch.sigmoid(s)


class Model(nn.Module):
    def __init__(self, in_channels, expand_ratio, kernel_size):
        super().__init__()
        hidden = in_channels * expand_ratio
        self.expand_conv = nn.Conv2d(in_channels, hidden, 1, bias=False)
        self.bn0 = nn.BatchNorm2d(hidden, eps=1e-3, momentum=0.01)
        self.depthwise_conv = nn.Conv2d(hidden, hidden, kernel_size, padding=kernel_size // 2, groups=hidden, bias=False)
        self.bn1 = nn.BatchNorm2d(hidden, eps=1e-3, momentum=0.01)
        self.se = SqueezeExcite(hidden, max(1, in_channels // 4))
        self.project_conv = nn.Conv2d(hidden, in_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(in_channels, eps=1e-3, momentum=0.01)
        self.act = nn.SiLU()
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.normal_(0, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.normal_(0, 0.1)
        self.eval()

    def forward(self, inputs):
        x = self.act(self.bn0(self.expand_conv(inputs)))
        x = self.act(self.bn1(self.depthwise_conv(x)))
        x = self.se(x)
        x = self.bn2(self.project_conv(x))
        return x + inputs


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, expand_ratio, kernel_size]
