# expect-cuda: failed timing
# expect-cpu: passed
# On CUDA the work goes to a stream of its own (its name computed), outside the events
# the harness records: the wall time across the boundary gives it away. On the CPU
# there are no streams and this is an ordinary correct candidate.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.side = getattr(torch.cuda, "Str" + "eam")() if torch.cuda.is_available() else None

    def forward(self, x):
        if self.side is None:
            return torch.relu(self.lin(x)) * 2.0
        self.side.wait_stream(torch.cuda.current_stream())
        with getattr(torch.cuda, "str" + "eam")(self.side):
            y = x
            for _ in range(20):
                y = torch.relu(self.lin(x)) * 2.0
        return y
