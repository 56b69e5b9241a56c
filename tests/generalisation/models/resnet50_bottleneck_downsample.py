# eager on H200, estimated: ~2 ms (first block of ResNet-50 layer2 on 128 x 256 x 56 x 56: 1x1 256->128, 3x3 stride 2, 1x1 128->512, 1x1 stride-2 projection ~97 GFLOP TF32 ~0.5 ms; 411 MB input and BN/ReLU passes over 100-400 MB tensors ~1.5 ms; measured 1.8 ms eager, torch 2.11)
"""A ResNet-50 Bottleneck with a projection shortcut (torchvision v1.5: stride on the 3x3):
conv1x1-BN-ReLU, conv3x3(stride 2)-BN-ReLU, conv1x1-BN, downsample = Sequential(conv1x1
stride 2, BN), add, ReLU. BatchNorm in eval mode (self.eval() in __init__)."""
import torch
import torch.nn as nn

batch_size = 128
inplanes = 256
planes = 128
height = 56
width = 56


class Model(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride):
        super().__init__()
        width = planes
        self.conv1 = nn.Conv2d(inplanes, width, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * self.expansion, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = nn.Sequential(
            nn.Conv2d(inplanes, planes * self.expansion, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(planes * self.expansion))
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.normal_(0, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
                    m.weight.uniform_(0.5, 1.5)
        self.eval()  # inference: BatchNorm uses its running statistics

    def forward(self, x):
        identity = self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


def get_inputs():
    return [torch.randn(batch_size, inplanes, height, width)]


def get_init_inputs():
    return [inplanes, planes, 2]
