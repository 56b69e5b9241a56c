"""Linear + GroupNorm over features + LeakyReLU + x + x: a GEMM, a grouped row norm, an elementwise tail."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 65536
IN_FEATURES = 512
HIDDEN = 1024
GROUPS = 16

CPU_SIZES = {"BATCH": 16, "IN_FEATURES": 32, "HIDDEN": 64, "GROUPS": 4}


class Model(nn.Module):
    def __init__(self, in_features, hidden, groups):
        super().__init__()
        self.fc = nn.Linear(in_features, hidden)
        self.norm = nn.GroupNorm(groups, hidden)

    def forward(self, x):
        x = self.norm(self.fc(x))
        x = F.leaky_relu(x, negative_slope=0.01)
        return x + x


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, GROUPS]
