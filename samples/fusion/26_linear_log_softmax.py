"""Linear + log_softmax over the classes: a classifier/LM head, a GEMM followed by a row reduction over its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
IN_FEATURES = 512
CLASSES = 8192

CPU_SIZES = {"BATCH": 16, "IN_FEATURES": 32, "CLASSES": 64}


class Model(nn.Module):
    def __init__(self, in_features, classes):
        super().__init__()
        self.head = nn.Linear(in_features, classes)

    def forward(self, x):
        return F.log_softmax(self.head(x), dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, CLASSES]
