# eager on H200, estimated: ~2.5 ms (two bmm of 17 GFLOP fp32 ~0.7 ms; 537 MB scores divided then softmaxed ~1.3 ms; measured 1.5 ms eager, torch 2.11)
"""Non-causal attention with heads folded into the batch: torch.bmm, divide by sqrt(d),
F.softmax, torch.bmm. Inputs are (B*H, S, D)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_heads = 128
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        d = q.shape[-1]
        attn = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)
        attn = F.softmax(attn, dim=2)
        return torch.bmm(attn, v)


def get_inputs():
    return [torch.randn(batch_heads, seq_len, head_dim),
            torch.randn(batch_heads, seq_len, head_dim),
            torch.randn(batch_heads, seq_len, head_dim)]


def get_init_inputs():
    return []
