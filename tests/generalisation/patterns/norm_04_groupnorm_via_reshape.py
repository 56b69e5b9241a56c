# eager on H200, estimated: ~5 ms (1 GB activations; reshape to (N, G, -1), mean, var, subtract, divide, reshape back, per-channel affine ~7 passes of ~2 GB; measured 3.8 ms eager, torch 2.11)
"""GroupNorm written by hand: x.reshape(N, G, -1), mean and var over the last dim,
normalize, reshape back to (N, C, H, W), weight.view(1, C, 1, 1) and bias.view(1, C, 1, 1)."""
import torch
import torch.nn as nn

batch_size = 64
channels = 256
height = 128
width = 128
groups = 32


class Model(nn.Module):
    def __init__(self, channels, groups, eps=1e-5):
        super().__init__()
        self.groups = groups
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))

    def forward(self, x):
        n, c, h, w = x.shape
        g = x.reshape(n, self.groups, -1)
        mean = g.mean(dim=-1, keepdim=True)
        var = g.var(dim=-1, unbiased=False, keepdim=True)
        g = (g - mean) / (var + self.eps).sqrt()
        x = g.reshape(n, c, h, w)
        return x * self.weight.view(1, c, 1, 1) + self.bias.view(1, c, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
