# eager on H200, estimated: ~2 ms (two 3x3 convs 128->128 on 128 x 56 x 56: 2 x 118 GFLOP TF32 in cuDNN ~1 ms; 205 MB activations through 2 BN, 2 ReLU and the residual add ~1 ms; measured 1.7 ms eager, torch 2.11)
"""A ResNet-18 BasicBlock (torchvision layout): conv3x3-BN-ReLU-conv3x3-BN, identity add,
ReLU(inplace=True). BatchNorm in eval mode (self.eval() in __init__) with non-trivial
running statistics."""
import torch
import torch.nn as nn

batch_size = 128
planes = 128
height = 56
width = 56


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def randomize_bn(bn):
    with torch.no_grad():
        bn.running_mean.normal_(0, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0, 0.1)


class Model(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        for bn in (self.bn1, self.bn2):
            randomize_bn(bn)
        self.eval()  # inference: BatchNorm uses its running statistics

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity
        out = self.relu(out)
        return out


def get_inputs():
    return [torch.randn(batch_size, planes, height, width)]


def get_init_inputs():
    return [planes, planes]
