"""Post-norm transformer encoder block with hand-written attention (qkv Linear, bmm, softmax, bmm) and a GELU MLP."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
SEQ = 1024
HIDDEN = 512
HEADS = 8
FFN = 2048

CPU_SIZES = {"BATCH": 2, "SEQ": 16, "HIDDEN": 32, "HEADS": 4, "FFN": 64}


class Model(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)
        self.norm2 = nn.LayerNorm(hidden)

    def attention(self, x):
        batch, seq, hidden = x.shape
        head_dim = hidden // self.heads
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        k = k.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        v = v.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(head_dim)
        probs = torch.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).transpose(1, 2).reshape(batch, seq, hidden)
        return self.out(context)

    def forward(self, x):
        x = self.norm1(x + self.attention(x))
        return self.norm2(x + self.fc2(F.gelu(self.fc1(x))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, HEADS, FFN]
