# eager on H200, estimated: ~3 ms (QK^T and PV 2 x 17 GFLOP fp32 ~0.7 ms; 537 MB score tensor through scale, mask, softmax ~2 ms; measured 2.2 ms eager, torch 2.11)
"""Causal attention: q @ k.transpose(-2, -1) * scale, a boolean triu mask built in forward,
masked_fill with -inf, softmax, @ v. Inputs are already split into heads (B, H, S, D)."""
import math

import torch
import torch.nn as nn

batch_size = 8
num_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q, k, v):
        s = q.size(-2)
        scores = q @ k.transpose(-2, -1) * self.scale
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device=q.device), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        return probs @ v


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim)
    k = torch.randn(batch_size, num_heads, seq_len, head_dim)
    v = torch.randn(batch_size, num_heads, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return [head_dim]
