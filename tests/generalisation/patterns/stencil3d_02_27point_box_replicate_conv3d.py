# eager on H200, estimated: ~5 ms (2 x 256^3 fp32 = 134 MB; replicate pad 3D copy, 27-tap cuDNN conv3d on a constant buffer, then a subtract: ~3-6 ms, conv3d dominates; measured 6.5 ms eager, torch 2.11)
"""27-point smoothing residual: a 3x3x3 box filter (the outer product of three 1D weights,
a buffer) as F.conv3d after F.pad(mode="replicate"), and u - smooth(u)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
depth = 256
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        a = torch.tensor([1.0, 2.0, 1.0])
        k = a[:, None, None] * a[None, :, None] * a[None, None, :]
        self.register_buffer("weight", (k / k.sum()).reshape(1, 1, 3, 3, 3))

    def forward(self, u):
        s = F.conv3d(F.pad(u, (1, 1, 1, 1, 1, 1), mode="replicate"), self.weight)
        return u - s


def get_inputs():
    return [torch.randn(batch_size, 1, depth, height, width)]


def get_init_inputs():
    return []
