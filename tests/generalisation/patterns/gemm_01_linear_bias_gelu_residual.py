# eager on H200, estimated: ~6.5 ms (8192 x 4096 x 4096 fp32 GEMM = 275 GFLOP at ~50 TFLOP/s ~5.5 ms; GELU and residual add over 134 MB ~0.3 ms; measured 5.6 ms eager, torch 2.11)
"""A residual MLP branch: x + F.gelu(self.fc(x)) with nn.Linear (bias), square weight."""
import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 8192
features = 4096


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)

    def forward(self, x):
        return x + F.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(tokens, features)]


def get_init_inputs():
    return [features]
