# eager on H200, estimated: ~6 ms (16384 x 4096 x 2048 fp32 matmul = 275 GFLOP ~5.5 ms; divide, row sum and scale over 134 MB ~0.2 ms; measured 5.6 ms eager, torch 2.11)
"""KernelBench-style matmul chain: torch.matmul(x, self.weight.T) / 2, sum over dim 1 with
keepdim, times a scaling factor; output (batch, 1)."""
import torch
import torch.nn as nn

batch_size = 16384
input_size = 4096
hidden_size = 2048


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size) * 0.02)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = torch.matmul(x, self.weight.T)
        x = x / 2
        x = torch.sum(x, dim=1, keepdim=True)
        return x * self.scaling_factor


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, 1.5]
