# The problem every adversarial candidate is judged against (KernelBench format).
# BATCH and N are filled in by run_suite.py for the device (small on the CPU).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2.0


def get_inputs():
    return [torch.rand(BATCH, N)]


def get_init_inputs():
    return [N]
