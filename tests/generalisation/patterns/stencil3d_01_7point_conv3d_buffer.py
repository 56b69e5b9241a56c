# eager on H200, estimated: ~5 ms (4 x 256^3 fp32 = 268 MB; a 1->1 channel 3x3x3 cuDNN conv3d with a sparse constant weight, poorly suited to cuDNN, ~3-6 ms; measured 12.3 ms eager, torch 2.11)
"""7-point 3D Laplacian as F.conv3d with a (1, 1, 3, 3, 3) weight buffer built in __init__
by index assignment; zero boundary from padding=1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
depth = 256
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        w = torch.zeros(1, 1, 3, 3, 3)
        w[0, 0, 1, 1, 1] = -6.0
        for d, h, x in [(0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2)]:
            w[0, 0, d, h, x] = 1.0
        self.register_buffer("weight", w)

    def forward(self, u):
        return F.conv3d(u, self.weight, padding=1)


def get_inputs():
    return [torch.randn(batch_size, 1, depth, height, width)]


def get_init_inputs():
    return []
