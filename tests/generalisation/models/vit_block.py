# eager on H200, estimated: ~4 ms (6304 tokens x 768: in_proj 22 + out_proj 7 + MLP 59 GFLOP fp32 ~1.8 ms; attention per image 197 x 197, 2 x 2.4 GFLOP; LayerNorms, GELU and residuals over 19-77 MB tensors ~1 ms; launch overheads; measured 2.7 ms eager, torch 2.11)
"""A ViT encoder block (torchvision style): pre-LayerNorm, nn.MultiheadAttention with
batch_first=True and need_weights=False, an MLP with nn.GELU, residual adds. The block is
put in eval mode in __init__ (its dropouts, p=0.1, are inactive)."""
import torch
import torch.nn as nn

batch_size = 32
num_tokens = 197
hidden_dim = 768
num_heads = 12
mlp_dim = 3072


class Model(nn.Module):
    def __init__(self, hidden_dim, num_heads, mlp_dim, dropout=0.1):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden_dim, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = nn.LayerNorm(hidden_dim, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(hidden_dim, mlp_dim), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(mlp_dim, hidden_dim), nn.Dropout(dropout))
        self.eval()  # inference: every dropout is the identity

    def forward(self, x):
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = x + self.dropout(y)
        return x + self.mlp(self.ln_2(x))


def get_inputs():
    return [torch.randn(batch_size, num_tokens, hidden_dim)]


def get_init_inputs():
    return [hidden_dim, num_heads, mlp_dim]
