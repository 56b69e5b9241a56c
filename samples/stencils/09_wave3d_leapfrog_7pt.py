"""Leapfrog step of the 3D wave equation on 512^3: 2u - u_prev + c^2 * 7-point Laplacian, zero (Dirichlet) boundary."""
import torch
import torch.nn as nn

GRID = 512

CPU_SIZES = {"GRID": 12}


class Model(nn.Module):
    def __init__(self, courant2):
        super().__init__()
        self.courant2 = courant2

    def forward(self, u, u_prev):
        c = u[1:-1, 1:-1, 1:-1]
        lap = (u[2:, 1:-1, 1:-1] + u[:-2, 1:-1, 1:-1] + u[1:-1, 2:, 1:-1] + u[1:-1, :-2, 1:-1]
               + u[1:-1, 1:-1, 2:] + u[1:-1, 1:-1, :-2] - 6.0 * c)
        out = torch.zeros_like(u)
        out[1:-1, 1:-1, 1:-1] = 2.0 * c - u_prev[1:-1, 1:-1, 1:-1] + self.courant2 * lap
        return out


def get_inputs():
    return [torch.randn(GRID, GRID, GRID), torch.randn(GRID, GRID, GRID)]


def get_init_inputs():
    return [0.1]
