import torch
import torch.nn as nn
import torch.nn.functional as F

# hiera: size batch_size=16
batch_size = 128
dim = 4096


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        y = F.gelu(self.linear(x))
        s = torch.exp(y) / torch.exp(y).sum(dim=-1, keepdim=True)
        for row in x:
            print(row.item())
        return self.norm(s.permute(1, 0).contiguous())


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
