# eager on H200, estimated: ~2.5 ms (1 GB input; row max read, subtract and exp written out 2 x 2 GB, row sum read 1 GB, tiny log/add; measured 1.8 ms eager, torch 2.11)
"""Row-wise logsumexp written with the max trick: m = x.max(dim=1, keepdim=True).values,
m + torch.log(torch.exp(x - m).sum(dim=1, keepdim=True)); output (rows, 1)."""
import torch
import torch.nn as nn

rows = 8192
cols = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        m = x.max(dim=1, keepdim=True).values
        return m + torch.log(torch.exp(x - m).sum(dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
