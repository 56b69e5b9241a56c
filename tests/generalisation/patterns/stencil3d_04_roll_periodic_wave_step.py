# eager on H200, estimated: ~4 ms (4 fields of 256^3 = 268 MB each for u and u_prev; six torch.roll copies, adds, and the leapfrog update, ~14 passes of ~0.5 GB; measured 3.7 ms eager, torch 2.11)
"""One leapfrog step of the 3D wave equation on a periodic grid: the 7-point Laplacian with
torch.roll over dims (1, 2, 3) in a Python loop, then 2u - u_prev + c^2 dt^2 lap."""
import torch
import torch.nn as nn

batch_size = 4
n = 256


class Model(nn.Module):
    def __init__(self, c, dt):
        super().__init__()
        self.k = (c * dt) ** 2

    def forward(self, u, u_prev):
        lap = -6.0 * u
        for dim in (1, 2, 3):
            lap = lap + torch.roll(u, shifts=1, dims=dim) + torch.roll(u, shifts=-1, dims=dim)
        return 2.0 * u - u_prev + self.k * lap


def get_inputs():
    return [torch.randn(batch_size, n, n, n), torch.randn(batch_size, n, n, n)]


def get_init_inputs():
    return [1.0, 0.3]
