# eager on H200, estimated: ~3 ms (537 MB NCHW activations; permute to NHWC, F.layer_norm over C on a non-contiguous view, permute back and .contiguous() ~3 passes of ~1 GB plus the strided read; measured 3.4 ms eager, torch 2.11)
"""LayerNorm over the channel dim of an NCHW tensor as vision code writes it:
x.permute(0, 2, 3, 1), F.layer_norm(x, (C,), weight, bias), permute(0, 3, 1, 2).contiguous()."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))
        self.channels = channels

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, (self.channels,), self.weight, self.bias, 1e-6)
        return x.permute(0, 3, 1, 2).contiguous()


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
