"""27-point 3D Laplacian (faces 14, edges 3, corners 1, centre -128; / 30) of 512^3 as F.conv3d, fixed weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

GRID = 512

CPU_SIZES = {"GRID": 12}


def laplacian27():
    """The compact 27-point weights: a neighbour's weight depends on how many axes it is offset along."""
    by_offsets = {0: -128.0, 1: 14.0, 2: 3.0, 3: 1.0}
    weight = torch.zeros(1, 1, 3, 3, 3)
    for d in range(3):
        for h in range(3):
            for w in range(3):
                offsets = (d != 1) + (h != 1) + (w != 1)
                weight[0, 0, d, h, w] = by_offsets[offsets] / 30.0
    return weight


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("weight", laplacian27(), persistent=False)

    def forward(self, x):
        return F.conv3d(x[None, None], self.weight, padding=1)[0, 0]


def get_inputs():
    return [torch.randn(GRID, GRID, GRID)]


def get_init_inputs():
    return []
