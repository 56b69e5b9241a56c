"""Starting a candidate process (candidate_host.py) without torch.

Everything here is standard library, so the runner can start its first
candidate process before it imports torch itself: the two imports (seconds
each) overlap, and the first job finds a process ready. isolation.py adopts
what `spawn` starts; the directories and limits a candidate process gets are
decided here, in one place.
"""

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

from . import sandbox


def memory_limit():
    """Host memory a candidate process may hold: HIERA_CANDIDATE_MEMORY_BYTES,
    else half of the machine's, at most 64 GiB."""
    if os.environ.get("HIERA_CANDIDATE_MEMORY_BYTES"):
        return int(os.environ["HIERA_CANDIDATE_MEMORY_BYTES"])
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        total = 16 << 30
    return min(64 << 30, total // 2)


def _scratch_root():
    """This runner's candidates' scratch directories (removed at shutdown)."""
    root = os.path.join(tempfile.gettempdir(), "hiera-candidates-%d" % os.getpid())
    os.makedirs(root, exist_ok=True)
    os.chmod(root, 0o711)
    return root


def _shared_cache():
    """Build caches candidates share (cubins, load_inline builds), kept
    across runs. A candidate can write here; what it writes can make a later
    candidate fail or slow, never pass: verdicts are measured. The trusted
    side never reads it (torch.compile's caches: trusted_compile_cache)."""
    cache = os.path.join(tempfile.gettempdir(), "hiera-candidate-cache-%d" % os.getuid())
    os.makedirs(cache, exist_ok=True)
    return cache


# torch.compile's caches in the trusted runner, by the variable that points at each.
TRUSTED_COMPILE_CACHE_VARS = (("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton"))
_trusted_compile_root = None


def _private_dir(path):
    """Whether path is a directory (not a link) of this user's that no other user can enter."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _make_trusted_compile_root():
    path = os.path.join(tempfile.gettempdir(), "hiera-trusted-compile-%d" % os.getuid())
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        try:
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
                os.chmod(path, 0o700)
        except OSError:
            pass
    except OSError:
        pass
    if _private_dir(path):
        return path
    return tempfile.mkdtemp(prefix="hiera-trusted-compile-")  # another user's, or a link: one of our own


def trusted_compile_cache():
    """The trusted runner's own torch.compile caches (inductor's and Triton's,
    for the "compile" baseline), set in this process's environment before
    anything here compiles: a directory of this user's, mode 0700, apart from
    every candidate's (sandbox.environment). A candidate that could write it
    could leave code there that the trusted side would load and run: as
    `nobody` (a runner started as root) it cannot enter it, and a candidate
    that keeps the user's uid gets it read-only in its mount namespace
    (CandidateProcess: "read_only"). Returns that directory."""
    global _trusted_compile_root
    if _trusted_compile_root is None or not _private_dir(_trusted_compile_root):
        _trusted_compile_root = _make_trusted_compile_root()
    for var, name in TRUSTED_COMPILE_CACHE_VARS:
        path = os.path.join(_trusted_compile_root, name)
        os.makedirs(path, 0o700, exist_ok=True)
        os.environ[var] = path
    return _trusted_compile_root


def remove_scratch_root():
    shutil.rmtree(os.path.join(tempfile.gettempdir(), "hiera-candidates-%d" % os.getpid()), ignore_errors=True)


def _user_home():
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_dir
    except (KeyError, ImportError):
        return os.environ.get("HOME", "")


def _read_only_paths(scratch_root):
    """The user's files and hiera's own, unless the scratch lies inside one
    (then that one stays writable: the sandbox user still cannot write it)."""
    out = []
    for p in (_user_home(), os.getcwd(), sandbox.package_dir(),
              os.path.dirname(os.path.dirname(os.path.dirname(sandbox.package_dir())))):
        p = os.path.realpath(p) if p else ""
        if not p or p == "/" or not os.path.isdir(p) or p in out:
            continue
        if (scratch_root + os.sep).startswith(p + os.sep):
            continue
        out.append(p)
    return out


class Spawned(object):
    """A candidate process just started: its Popen, the runner's end of the
    socket pair, its scratch directory and stderr file, the device it opens
    ("cuda:N" or "cpu"), and when it was started."""

    def __init__(self, proc, sock, scratch, stderr_path, device_name, secrets):
        self.proc = proc
        self.sock = sock
        self.scratch = scratch
        self.stderr_path = stderr_path
        self.device_name = device_name
        self.secrets = secrets
        self.spawned_at = time.time()

    def discard(self):
        """Ends a process nobody adopted."""
        kill_group(self.proc)
        self.sock.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def kill_group(proc):
    """Ends a candidate process with its process group (its own children:
    torch.compile's workers) and reaps it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def spawn(device_name):
    """Starts `python3 -m hiera_runner.candidate_host` for device_name in its
    sandbox, with its own scratch directory. -> Spawned."""
    secrets = sandbox.secret_values()
    root = _scratch_root()
    scratch = tempfile.mkdtemp(prefix="c", dir=root)
    os.makedirs(os.path.join(scratch, "tmp"), exist_ok=True)
    cache = _shared_cache()
    trusted = trusted_compile_cache()  # exists before the candidate's mount namespace is made
    parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    config = {"fd": child_sock.fileno(), "parent": os.getpid(), "device": device_name,
              "read_only": _read_only_paths(root) + [trusted], "home": _user_home(),
              "writable": [scratch, cache]}
    env = sandbox.environment(scratch, cache)
    env["PYTHONPATH"] = sandbox.package_dir() + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    stderr_path = os.path.join(scratch, "stderr")
    err = open(stderr_path, "wb")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hiera_runner.candidate_host", json.dumps(config)],
            stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env, cwd=scratch,
            pass_fds=(child_sock.fileno(),), close_fds=True, start_new_session=True)
    except BaseException:
        parent_sock.close()
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    finally:
        err.close()
        child_sock.close()
    return Spawned(proc, parent_sock, scratch, stderr_path, device_name, secrets)


# --- the first process, started before the runner imports torch ---------------------

_early = None  # the Spawned start_early made, until a job or hello takes it


def likely_cuda_device():
    """"cuda:N" when this machine shows an NVIDIA device node and CUDA is not
    hidden from this process, else None: a guess made without torch (hello
    checks it with torch and ends a process started on a wrong guess)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1", "none", "NoDevFiles"):
        return None
    if not os.path.exists("/dev/nvidiactl"):
        return None
    try:
        index = int(os.environ.get("HIERA_DEVICE", "0"))
    except ValueError:
        index = 0
    return "cuda:%d" % index


def start_early():
    """Starts one candidate process for the likely CUDA device, ahead of
    `import torch` in the runner; nothing where no GPU is likely."""
    global _early
    name = likely_cuda_device()
    if name is None or _early is not None:
        return
    try:
        _early = spawn(name)
    except OSError:
        pass


def take_early(device_name):
    """The process start_early started, when it is for device_name; a process
    for another device is ended. None when there is none."""
    global _early
    spawned, _early = _early, None
    if spawned is not None and spawned.device_name != device_name:
        spawned.discard()
        return None
    return spawned
