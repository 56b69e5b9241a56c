# expect: failed static
# The kernel build is tried in __init__; when it fails, forward quietly uses torch.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        try:
            from hiera_runner import nvrtc_runtime
            self.kernel = nvrtc_runtime.compile("extern \"C\" __global__ void k() {}", "k")
        except BaseException:
            self.kernel = None

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2.0
