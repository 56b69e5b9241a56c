# eager on H200, estimated: ~2.5 ms (64 MB input; F.unfold writes 9 x 64 = 576 MB of columns, a broadcast multiply 1.2 GB, a sum 576 MB, fold back by view; measured 1.2 ms eager, torch 2.11)
"""A 3x3 weighted window (a sharpening kernel) with F.unfold: columns (B, C*9, H*W),
view(B, C, 9, H*W), multiply by a 9-tap weight buffer, sum over the taps, view back to
(B, C, H, W). Zero padding comes from unfold's padding=1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 8
height = 512
width = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        w = torch.tensor([0.0, -1.0, 0.0, -1.0, 5.0, -1.0, 0.0, -1.0, 0.0])
        self.register_buffer("taps", w.view(1, 1, 9, 1))

    def forward(self, x):
        b, c, h, w = x.shape
        cols = F.unfold(x, kernel_size=3, padding=1).view(b, c, 9, h * w)
        return (cols * self.taps).sum(dim=2).view(b, c, h, w)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
