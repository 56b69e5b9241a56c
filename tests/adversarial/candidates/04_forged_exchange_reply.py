# expect: failed protocol
# Finds its own end of the exchange socket (its command line names it) and answers the
# trusted side itself, before the harness does: the replies no longer fit the requests.
import json
import struct
import sys
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.fd = json.loads(sys.argv[1])["fd"]

    def forward(self, x):
        body = json.dumps({"ok": True, "elapsed_ms": 0.001, "outputs": 1}).encode()
        s = sys.modules["soc" + "ket"].socket(fileno=self.fd)
        s.sendall(struct.pack(">I", len(body)) + body)
        s.detach()
        return torch.relu(self.lin(x)) * 2.0
