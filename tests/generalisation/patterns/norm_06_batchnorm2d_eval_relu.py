# eager on H200, estimated: ~1.5 ms (1.07 GB activations; cuDNN batch norm in inference mode then an in-place ReLU, 2 passes of ~2 GB; measured 1.2 ms eager, torch 2.11)
"""nn.BatchNorm2d in eval mode (running statistics, set to non-trivial values in __init__;
the module calls self.eval() in __init__) followed by nn.ReLU(inplace=True)."""
import torch
import torch.nn as nn

batch_size = 128
channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        self.act = nn.ReLU(inplace=True)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(channels))
            self.bn.running_var.copy_(1 + 0.1 * torch.rand(channels))
            self.bn.weight.copy_(1 + 0.1 * torch.randn(channels))
            self.bn.bias.copy_(0.1 * torch.randn(channels))
        self.eval()  # inference: BatchNorm uses its running statistics

    def forward(self, x):
        return self.act(self.bn(x))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
