"""Pre-norm causal transformer block with nn.MultiheadAttention (fixed causal mask buffer) and a GELU MLP."""
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
    def __init__(self, seq, hidden, heads, ffn):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, dropout=0.0, batch_first=True)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)
        # True above the diagonal: position i attends to positions <= i (every row keeps its diagonal).
        self.register_buffer("causal_mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1),
                             persistent=False)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, attn_mask=self.causal_mask, need_weights=False)[0]
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return [SEQ, HIDDEN, HEADS, FFN]
