# eager on H200, estimated: ~3 ms (8192 x 2048 x 4096 fp32 addmm = 137 GFLOP ~2.8 ms; relu_ and mul_ in place over 134 MB ~0.1 ms; measured 2.9 ms eager, torch 2.11)
"""A linear layer spelled with its own parameters: torch.addmm(self.bias, x, self.weight.t()),
then in-place relu_ and a scalar mul_."""
import math

import torch
import torch.nn as nn

batch_size = 8192
in_features = 2048
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        bound = 1.0 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        self.scale = scale

    def forward(self, x):
        y = torch.addmm(self.bias, x, self.weight.t())
        return y.relu_().mul_(self.scale)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, 1.7]
