"""Sum over the middle dimension of a 3D tensor (keepdim): a strided, bandwidth-bound reduction."""
import torch
import torch.nn as nn

BATCH = 128
DIM1 = 4096
DIM2 = 1024

CPU_SIZES = {"BATCH": 4, "DIM1": 64, "DIM2": 32}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [1]
