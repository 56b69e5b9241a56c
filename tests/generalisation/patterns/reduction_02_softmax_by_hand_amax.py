# eager on H200, estimated: ~3 ms (1 GB input; amax read, subtract, exp, sum read, divide: ~4 passes of 2 GB; measured 2.6 ms eager, torch 2.11)
"""Softmax over the last dim by hand: x - x.amax(-1, keepdim=True), .exp(), divided by its
sum(-1, keepdim=True), with an in-place exp_ and div_."""
import torch
import torch.nn as nn

rows = 16384
cols = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        e = (x - x.amax(dim=-1, keepdim=True)).exp_()
        return e.div_(e.sum(dim=-1, keepdim=True))


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
