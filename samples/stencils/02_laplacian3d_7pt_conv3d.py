"""3D 7-point Laplacian of a 512^3 grid as F.conv3d with a fixed 3x3x3 kernel and zero padding (full-size output)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

GRID = 512

CPU_SIZES = {"GRID": 12}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        weight = torch.zeros(1, 1, 3, 3, 3)
        weight[0, 0, 1, 1, 1] = -6.0
        for d, h, w in ((0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2)):
            weight[0, 0, d, h, w] = 1.0
        # Fixed coefficients: not a parameter, not checkpoint state.
        self.register_buffer("weight", weight, persistent=False)

    def forward(self, x):
        return F.conv3d(x[None, None], self.weight, padding=1)[0, 0]


def get_inputs():
    return [torch.randn(GRID, GRID, GRID)]


def get_init_inputs():
    return []
