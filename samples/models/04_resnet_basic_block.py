"""ResNet basic block: conv3x3-BN-ReLU-conv3x3-BN + identity, ReLU; BatchNorm with running statistics (inference)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 128
HEIGHT = 56
WIDTH = 56

CPU_SIZES = {"BATCH": 2, "CHANNELS": 8, "HEIGHT": 10, "WIDTH": 10}


class FrozenBatchNorm2d(nn.BatchNorm2d):
    """BatchNorm that always normalises with its running statistics, as a deployed network does."""

    def __init__(self, channels):
        super().__init__(channels)
        with torch.no_grad():  # statistics as after training; the 0/1 defaults would make BN an identity
            self.running_mean.copy_(torch.randn(channels) * 0.1)
            self.running_var.copy_(torch.rand(channels) + 0.5)
            self.weight.copy_(torch.rand(channels) + 0.5)
            self.bias.copy_(torch.randn(channels) * 0.1)

    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            training=False, eps=self.eps)


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = FrozenBatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = FrozenBatchNorm2d(channels)

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
