# eager on H200, estimated: ~3 ms (512 MB activations; mean, subtract, var, add eps, sqrt, divide, scale, shift ~8 passes of ~1 GB; measured 1.9 ms eager, torch 2.11)
"""LayerNorm over the last dim written by hand: x.mean(-1, keepdim=True),
x.var(-1, keepdim=True, unbiased=False), (x - mean) / torch.sqrt(var + eps) * weight + bias."""
import torch
import torch.nn as nn

batch_size = 64
seq_len = 2048
hidden = 1024


class Model(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))
        self.bias = nn.Parameter(0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
