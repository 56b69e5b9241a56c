"""3D 7-point Laplacian of a 512^3 grid written with shifted slices; returns the interior (510^3) as a new tensor."""
import torch
import torch.nn as nn

GRID = 512

CPU_SIZES = {"GRID": 12}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        c = x[1:-1, 1:-1, 1:-1]
        return (x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1]
                + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1]
                + x[1:-1, 1:-1, 2:] + x[1:-1, 1:-1, :-2]
                - 6.0 * c)


def get_inputs():
    return [torch.randn(GRID, GRID, GRID)]


def get_init_inputs():
    return []
