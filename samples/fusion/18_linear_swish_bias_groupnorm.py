"""Linear + Swish + bias vector add + GroupNorm over features: a GEMM epilogue ending in a grouped norm."""
import torch
import torch.nn as nn

BATCH = 32768
IN_FEATURES = 512
OUT_FEATURES = 2048
GROUPS = 32

CPU_SIZES = {"BATCH": 16, "IN_FEATURES": 32, "OUT_FEATURES": 64, "GROUPS": 8}


class Model(nn.Module):
    def __init__(self, in_features, out_features, groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.1)
        self.norm = nn.GroupNorm(groups, out_features)

    def forward(self, x):
        x = self.fc(x)
        x = torch.sigmoid(x) * x
        x = x + self.bias
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, GROUPS]
