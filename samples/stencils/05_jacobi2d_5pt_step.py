"""One 5-point Jacobi sweep for the 2D Poisson equation on 12288x16384; the boundary is copied from u."""
import torch
import torch.nn as nn

ROWS = 12288
COLS = 16384

CPU_SIZES = {"ROWS": 16, "COLS": 24}


class Model(nn.Module):
    def __init__(self, h2):
        super().__init__()
        self.h2 = h2

    def forward(self, u, f):
        out = u.clone()
        out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                  - self.h2 * f[1:-1, 1:-1])
        return out


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [1e-4]
