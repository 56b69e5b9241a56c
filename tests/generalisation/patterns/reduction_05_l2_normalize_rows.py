# eager on H200, estimated: ~2 ms (1 GB embeddings; x * x written 2 GB, row sum read 1 GB, sqrt and clamp tiny, divide 2 GB; measured 1.6 ms eager, torch 2.11)
"""L2-normalize embedding rows by hand: torch.sqrt((x * x).sum(dim=1, keepdim=True)),
clamp(min=eps), x / norm."""
import torch
import torch.nn as nn

rows = 65536
dim = 4096


class Model(nn.Module):
    def __init__(self, eps=1e-12):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        norm = torch.sqrt((x * x).sum(dim=1, keepdim=True)).clamp(min=self.eps)
        return x / norm


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return []
