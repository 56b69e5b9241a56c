"""Entry point: `python3 -m hiera_runner [--device N]`.

Before anything else can print, stdout is taken for frames alone: the real
stdout is kept on a private descriptor and fd 1 is pointed at stderr, so a
candidate's print() (or a C extension's printf) cannot corrupt the stream.
stdin is likewise kept private and fd 0 points at /dev/null.
"""

import os
import sys


def _take_stdio():
    in_fd = os.dup(0)    # os.dup's copies are not inherited by child processes
    out_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)
    return in_fd, out_fd


def _parse_args(argv):
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--device" and i + 1 < len(argv):
            os.environ["HIERA_DEVICE"] = argv[i + 1]
            i += 2
        elif arg.startswith("--device="):
            os.environ["HIERA_DEVICE"] = arg.split("=", 1)[1]
            i += 1
        else:
            sys.stderr.write("hiera_runner: unknown argument %r (usage: python3 -m hiera_runner [--device N])\n" % arg)
            return False
    return True


def _not_dumpable():
    """As ssh-agent does: no process of the same user may read this one's
    memory or /proc/PID/environ (a candidate process of the same user would
    otherwise find the runner's environment there)."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def main(argv):
    _not_dumpable()
    in_fd, out_fd = _take_stdio()
    if not _parse_args(argv):
        return 2
    from . import candidate_spawn
    candidate_spawn.start_early()  # its `import torch` overlaps ours: the first job finds it ready
    import torch  # after the redirect: anything printed at import goes to stderr
    from . import device
    from .server import Server
    if torch.cuda.is_available() and "HIERA_DEVICE" in os.environ:
        torch.cuda.set_device(device.default_index())
    code = Server(in_fd, out_fd).serve()
    sys.stderr.flush()
    # os._exit: a candidate's leftover threads or atexit hooks must not keep
    # the runner alive or hang it after the reply.
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
