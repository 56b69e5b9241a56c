# eager on H200, estimated: ~5 ms (bf16 matmuls 2 x 69 GFLOP on tensor cores ~0.3 ms; 1 GB bf16 scores, torch.where, upcast to a 2 GB fp32 softmax and back ~4.5 ms; measured 6.1 ms eager, torch 2.11)
"""Causal attention in bfloat16 as mixed-precision code writes it: bf16 q @ k^T, a tril mask
from torch.ones(...).tril().bool(), torch.where(mask, scores, finfo.min), softmax in float32
(.float() then .to(q.dtype)), bf16 @ v."""
import torch
import torch.nn as nn

batch_size = 8
num_heads = 16
seq_len = 2048
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        s = q.shape[-2]
        scores = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
        causal = torch.ones(s, s, device=q.device).tril().bool()
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype, device=q.device))
        probs = scores.float().softmax(dim=-1).to(q.dtype)
        return torch.matmul(probs, v)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []
