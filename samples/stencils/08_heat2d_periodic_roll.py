"""Explicit heat-equation step on 4 periodic 8192^2 fields: u + alpha * 5-point Laplacian built from torch.roll."""
import torch
import torch.nn as nn

CHANNELS = 4
ROWS = 8192
COLS = 8192

CPU_SIZES = {"CHANNELS": 2, "ROWS": 16, "COLS": 24}


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, u):
        lap = (torch.roll(u, 1, dims=-1) + torch.roll(u, -1, dims=-1)
               + torch.roll(u, 1, dims=-2) + torch.roll(u, -1, dims=-2) - 4.0 * u)
        return u + self.alpha * lap


def get_inputs():
    return [torch.randn(CHANNELS, ROWS, COLS)]


def get_init_inputs():
    return [0.2]
