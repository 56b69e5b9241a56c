# eager on H200, estimated: ~2.5 ms (baddbmm reads a 4 MB-per-head bias and 17 GFLOP fp32 ~0.6 ms; 537 MB softmax ~0.4 ms; bmm 17 GFLOP ~0.35 ms; bias broadcast copy ~0.5 ms; measured 2.1 ms eager, torch 2.11)
"""Non-causal attention with an ALiBi-style distance bias: per-head slopes times |i - j|
built once in __init__ as a buffer (H, S, S), expanded over the batch, torch.baddbmm(bias,
q, k^T, alpha=scale), softmax, torch.bmm. Inputs (B*H, S, D)."""
import math

import torch
import torch.nn as nn

batch_size = 8
num_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self, num_heads, seq_len, head_dim):
        super().__init__()
        self.num_heads = num_heads
        self.alpha = 1.0 / math.sqrt(head_dim)
        slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / num_heads) for i in range(num_heads)])
        pos = torch.arange(seq_len)
        dist = (pos[None, :] - pos[:, None]).abs().float()
        self.register_buffer("bias", -slopes[:, None, None] * dist[None])

    def forward(self, q, k, v):
        bh, s, _ = q.shape
        bias = self.bias.unsqueeze(0).expand(bh // self.num_heads, -1, -1, -1).reshape(bh, s, s)
        scores = torch.baddbmm(bias, q, k.transpose(1, 2), beta=1.0, alpha=self.alpha)
        return torch.bmm(scores.softmax(-1), v)


def get_inputs():
    bh = batch_size * num_heads
    return [torch.randn(bh, seq_len, head_dim), torch.randn(bh, seq_len, head_dim), torch.randn(bh, seq_len, head_dim)]


def get_init_inputs():
    return [num_heads, seq_len, head_dim]
