"""Rotary embedding of q and k (x * cos + rotate_half(x) * sin): slices, cat and broadcasts per tensor."""
import torch
import torch.nn as nn

BATCH = 8
HEADS = 32
SEQ = 2048
HEAD_DIM = 128

CPU_SIZES = {"BATCH": 2, "HEADS": 2, "SEQ": 8, "HEAD_DIM": 16}


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Model(nn.Module):
    def __init__(self, seq, head_dim, base):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        angles = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        # Fixed tables, not parameters or checkpoint state.
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, q, k):
        return q * self.cos + rotate_half(q) * self.sin, k * self.cos + rotate_half(k) * self.sin


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM), torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)]


def get_init_inputs():
    return [SEQ, HEAD_DIM, 10000.0]
