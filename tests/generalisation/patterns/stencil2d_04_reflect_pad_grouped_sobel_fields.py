# eager on H200, estimated: ~4 ms (3 fields of 16 x 1024 x 1024 = 201 MB; reflect pad, grouped 3x3 conv to 6 channels 403 MB, squares, add, sqrt ~10 passes; measured 2.0 ms eager, torch 2.11)
"""Gradient magnitude of several fields at once: a Sobel x / y pair per field as a grouped
conv2d (groups = fields) with a weight buffer repeated in __init__, F.pad(mode="reflect"),
then sqrt(gx^2 + gy^2) with channels split by slicing."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
fields = 3
height = 1024
width = 1024


class Model(nn.Module):
    def __init__(self, fields):
        super().__init__()
        sx = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
        k = torch.stack([sx, sx.t()]).unsqueeze(1)  # (2, 1, 3, 3)
        self.register_buffer("kernel", k.repeat(fields, 1, 1, 1))  # (2*fields, 1, 3, 3)
        self.fields = fields

    def forward(self, x):
        g = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), self.kernel, groups=self.fields)
        gx, gy = g[:, 0::2], g[:, 1::2]
        return torch.sqrt(gx * gx + gy * gy + 1e-12)


def get_inputs():
    return [torch.randn(batch_size, fields, height, width)]


def get_init_inputs():
    return [fields]
