# eager on H200, estimated: ~5 ms (32 x 192 x 56 x 56 = 77 MB; depthwise 7x7 conv ~0.3 ms; 100352 tokens: pwconv1/pwconv2 2 x 30 GFLOP fp32 ~1.2 ms; 308 MB hidden through GELU; permutes, LayerNorm, layer scale, residual ~2 ms; measured 2.7 ms eager, torch 2.11)
"""A ConvNeXt block (the official implementation's layout): depthwise Conv2d 7x7, permute to
NHWC, nn.LayerNorm over channels, Linear 4x, nn.GELU, Linear back, layer scale gamma,
permute to NCHW, residual add (drop path is the identity)."""
import torch
import torch.nn as nn

batch_size = 32
dim = 192
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, dim, layer_scale_init_value=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale_init_value * torch.ones((dim,)) + 0.1 * torch.rand(dim))

    def forward(self, x):
        inp = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
        x = self.norm(x)
        x = self.pwconv1(x)
        x = self.act(x)
        x = self.pwconv2(x)
        x = self.gamma * x
        x = x.permute(0, 3, 1, 2)  # (N, H, W, C) -> (N, C, H, W)
        return inp + x


def get_inputs():
    return [torch.randn(batch_size, dim, height, width)]


def get_init_inputs():
    return [dim]
