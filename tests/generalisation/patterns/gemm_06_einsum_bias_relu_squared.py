# eager on H200, estimated: ~3.5 ms (einsum bsd,df->bsf is 16384 x 2048 x 2048 fp32 = 137 GFLOP ~2.8 ms; bias, relu, square over 134 MB ~0.3 ms; measured 3.4 ms eager, torch 2.11)
"""A projection spelled as torch.einsum("bsd,df->bsf") with a (d, f) weight layout, plus a
bias, then squared ReLU (torch.relu(y) ** 2)."""
import torch
import torch.nn as nn

batch_size = 32
seq_len = 512
d_in = 2048
d_out = 2048


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d_in, d_out) / d_in ** 0.5)
        self.b = nn.Parameter(torch.zeros(d_out))

    def forward(self, x):
        y = torch.einsum("bsd,df->bsf", x, self.w) + self.b
        return torch.relu(y) ** 2


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_in)]


def get_init_inputs():
    return [d_in, d_out]
