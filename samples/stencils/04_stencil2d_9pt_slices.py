"""2D compact 9-point Laplacian (4*edges + corners - 20*centre) / 6 of 12288x16384 with slices; interior out."""
import torch
import torch.nn as nn

ROWS = 12288
COLS = 16384

CPU_SIZES = {"ROWS": 16, "COLS": 24}


class Model(nn.Module):
    def __init__(self, inv_h2):
        super().__init__()
        self.inv_h2 = inv_h2

    def forward(self, u):
        edges = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
        corners = u[:-2, :-2] + u[:-2, 2:] + u[2:, :-2] + u[2:, 2:]
        return (4.0 * edges + corners - 20.0 * u[1:-1, 1:-1]) * (self.inv_h2 / 6.0)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [1.0]
