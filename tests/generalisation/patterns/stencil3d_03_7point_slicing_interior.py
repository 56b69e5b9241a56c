# eager on H200, estimated: ~3.5 ms (512^3 fp32 = 537 MB; six shifted-slice adds, a scale and a subtract over the interior, ~8 passes of ~1 GB; measured 3.4 ms eager, torch 2.11)
"""7-point Laplacian on the interior of one 3D grid (D, H, W) with shifted slices, scaled by
1/h^2; the output is the (D-2, H-2, W-2) interior."""
import torch
import torch.nn as nn

n = 512


class Model(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.inv_h2 = 1.0 / (h * h)

    def forward(self, u):
        c = u[1:-1, 1:-1, 1:-1]
        lap = (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1]
               + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
               + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] - 6.0 * c)
        return lap * self.inv_h2


def get_inputs():
    return [torch.randn(n, n, n)]


def get_init_inputs():
    return [1.0 / n]
