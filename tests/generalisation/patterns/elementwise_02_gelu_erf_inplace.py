# eager on H200, estimated: ~2 ms (512 MB input; divide, erf_, add_, mul_, mul: ~5 passes of ~1 GB, the in-place ones reuse one buffer; measured 1.4 ms eager, torch 2.11)
"""Exact GELU with erf, with in-place steps on a temporary: t = x / math.sqrt(2); t.erf_();
t.add_(1.0).mul_(0.5); x * t."""
import math

import torch
import torch.nn as nn

batch_size = 8192
features = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        t = x / math.sqrt(2.0)
        t.erf_()
        t.add_(1.0).mul_(0.5)
        return x * t


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return []
