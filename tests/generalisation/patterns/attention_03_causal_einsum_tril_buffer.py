# eager on H200, estimated: ~3.5 ms (two einsum contractions of 17 GFLOP fp32 ~0.7 ms; 537 MB scores through scale, mask compare, masked_fill, softmax ~2.5 ms; measured 2.2 ms eager, torch 2.11)
"""Causal attention with einsum: a lower-triangular mask registered as a buffer in __init__
(at a maximum length, sliced in forward), masked_fill(mask == 0, -1e9) with a large negative
instead of -inf, softmax, einsum back. Inputs are (B, H, S, D)."""
import torch
import torch.nn as nn

batch_size = 8
num_heads = 16
seq_len = 1024
head_dim = 64
max_len = 2048


class Model(nn.Module):
    def __init__(self, head_dim, max_len):
        super().__init__()
        self.scale = head_dim ** -0.5
        self.register_buffer("mask", torch.tril(torch.ones(max_len, max_len)))

    def forward(self, q, k, v):
        t = q.shape[2]
        w = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.scale
        w = w.masked_fill(self.mask[:t, :t] == 0, -1e9)
        w = w.softmax(dim=-1)
        return torch.einsum("bhqk,bhkd->bhqd", w, v)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return [head_dim, max_len]
