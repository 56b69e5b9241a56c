# eager on H200, estimated: ~2.5 ms (256 MB bf16 input upcast to 512 MB fp32; torch.norm, scale by sqrt(d), divide, downcast, weight ~6 passes; measured 1.4 ms eager, torch 2.11)
"""RMSNorm in bfloat16 with an fp32 upcast and torch.norm instead of mean of squares:
x.float() / (x.float().norm(dim=-1, keepdim=True) * d ** -0.5 + eps), cast back with
.type_as(x), times a bf16 weight."""
import torch
import torch.nn as nn

batch_size = 16
seq_len = 2048
dim = 4096


class Model(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.scale = dim ** -0.5
        self.weight = nn.Parameter(torch.ones(dim, dtype=torch.bfloat16))

    def forward(self, x):
        xf = x.float()
        rms = xf.norm(dim=-1, keepdim=True) * self.scale
        return (xf / (rms + self.eps)).type_as(x) * self.weight


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [dim]
