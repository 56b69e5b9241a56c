"""bfloat16 Linear (bias) + GELU: a tensor-core GEMM where the separate activation pass is a large share of the time."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32768
IN_FEATURES = 2048
OUT_FEATURES = 8192

CPU_SIZES = {"BATCH": 16, "IN_FEATURES": 32, "OUT_FEATURES": 64}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES).to(torch.bfloat16)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
