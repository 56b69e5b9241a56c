# eager on H200, estimated: ~3.5 ms (permute copies 3 x 32 MB; QK^T/PV 2 x 17 GFLOP fp32 ~0.7 ms; 537 MB scores + additive mask + softmax ~2 ms; measured 2.1 ms eager, torch 2.11)
"""Multi-head causal attention from (B, S, E) inputs: view(B, S, H, D).permute(0, 2, 1, 3),
an additive float mask buffer (0 / -inf from torch.full(...).triu(1)), softmax, nn.Dropout
(inactive: the module calls self.eval() in __init__), then permute back, .contiguous().view(B, S, E)."""
import math

import torch
import torch.nn as nn

batch_size = 8
seq_len = 1024
embed_dim = 1024
num_heads = 16


class Model(nn.Module):
    def __init__(self, embed_dim, num_heads, seq_len):
        super().__init__()
        self.h = num_heads
        self.d = embed_dim // num_heads
        self.drop = nn.Dropout(0.1)
        mask = torch.full((seq_len, seq_len), float("-inf")).triu(1)
        self.register_buffer("attn_mask", mask)
        self.eval()  # inference: the dropout is the identity

    def forward(self, q, k, v):
        b, s, e = q.shape
        q = q.view(b, s, self.h, self.d).permute(0, 2, 1, 3)
        k = k.view(b, s, self.h, self.d).permute(0, 2, 1, 3)
        v = v.view(b, s, self.h, self.d).permute(0, 2, 1, 3)
        att = torch.matmul(q, k.permute(0, 1, 3, 2)) / math.sqrt(self.d)
        att = att + self.attn_mask[:s, :s]
        att = self.drop(torch.softmax(att, dim=-1))
        out = torch.matmul(att, v)
        return out.permute(0, 2, 1, 3).contiguous().view(b, s, e)


def get_inputs():
    return [torch.randn(batch_size, seq_len, embed_dim) for _ in range(3)]


def get_init_inputs():
    return [embed_dim, num_heads, seq_len]
