# eager on H200, estimated: ~3 ms (512 MB single-channel images; F.pad replicate copy ~1 GB, a 1->1 channel 5x5 cuDNN conv on a constant buffer ~1.5 ms; measured 3.4 ms eager, torch 2.11)
"""Gaussian blur of single-channel images: the 5x5 kernel is the outer product of a 1D
Gaussian, built in __init__ and registered as a buffer; F.pad(mode="replicate") then F.conv2d."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
height = 2048
width = 2048


class Model(nn.Module):
    def __init__(self, sigma):
        super().__init__()
        x = torch.arange(5, dtype=torch.float32) - 2
        g = torch.exp(-x ** 2 / (2 * sigma ** 2))
        g = g / g.sum()
        self.register_buffer("weight", torch.outer(g, g).view(1, 1, 5, 5))

    def forward(self, img):
        img = F.pad(img, (2, 2, 2, 2), mode="replicate")
        return F.conv2d(img, self.weight)


def get_inputs():
    return [torch.rand(batch_size, 1, height, width)]


def get_init_inputs():
    return [1.0]
