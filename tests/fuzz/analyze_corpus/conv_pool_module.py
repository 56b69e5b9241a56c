import torch
from torch import nn


# hiera: size n=8
class Encoder(nn.Module):
    """A conv block with a loop over stages and a host sync in forward."""

    def __init__(self, channels=32, stages=3):
        super().__init__()
        self.stages = nn.ModuleList(
            nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU())
            for _ in range(stages))
        self.register_buffer("scale", torch.tensor([0.5, 0.25]))

    def forward(self, images, mask=None):
        h = images
        for stage in self.stages:
            h = stage(h) + h
        if mask is not None and mask.any().item():
            h = h.masked_fill(mask, 0.0)
        pooled = torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1)
        return pooled * self.scale[0] + h.mean((2, 3)) * self.scale[1]


n = 8


def get_inputs():
    return [torch.rand(n, 32, 56, 56)]


def get_init_inputs():
    return []
