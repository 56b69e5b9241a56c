# eager on H200, estimated: ~3 ms (2 GB input (B, T, F); mean, max and var over the middle dim T, three reading passes, then a tiny stack; measured 1.6 ms eager, torch 2.11)
"""Pooling statistics over the time axis of a (B, T, F) sequence: torch.mean(x, 1),
torch.max(x, dim=1)[0], torch.var(x, 1) (unbiased), stacked to (B, 3, F)."""
import torch
import torch.nn as nn

batch_size = 256
time_steps = 512
features = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        mean = torch.mean(x, 1)
        mx = torch.max(x, dim=1)[0]
        var = torch.var(x, 1)
        return torch.stack([mean, mx, var], dim=1)


def get_inputs():
    return [torch.randn(batch_size, time_steps, features)]


def get_init_inputs():
    return []
