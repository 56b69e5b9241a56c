"""nn.LayerNorm over the hidden dimension of a [batch, seq, hidden] activation: the transformer row norm."""
import torch
import torch.nn as nn

BATCH = 8
SEQ = 8192
HIDDEN = 4096

CPU_SIZES = {"BATCH": 2, "SEQ": 16, "HIDDEN": 64}


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
