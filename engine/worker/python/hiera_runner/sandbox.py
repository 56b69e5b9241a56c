"""The candidate process's sandbox, from what Linux already provides.

The trusted runner starts a candidate process with an environment reduced to
an allowlist, a scratch directory of its own as working directory and home,
stdin closed and no descriptor but its end of the exchange socket. The
process then, before it imports torch (namespaces need a single thread):
dies with its parent (PR_SET_PDEATHSIG), leaves the network (a network
namespace with nothing in it), makes the user's home, the working directory
it was started from and hiera's own files read-only and hides the places
secrets live (~/.ssh, ~/.config, ...; a mount namespace), caps core dumps,
file sizes and processes (setrlimit), once CUDA is up drops to the user
`nobody` where it runs as root, and last denies the system calls of
denied_syscalls.txt to every thread (seccomp, through libseccomp), so
nothing it runs can undo the mounts, reach another process's memory or set
the clock. Host memory and wall time are watched by the
trusted side, which kills the process group. Each protection that could not
be put in force is reported with its reason, and the run goes on.
"""

import ctypes
import errno
import os
import pwd
import resource
import signal
import sys

# The variables a candidate process keeps: what CUDA, torch, compilers and
# locales need. Everything else (API keys, tokens, the user's own) is dropped.
ALLOWED_ENV = (
    "PATH", "LANG", "LANGUAGE", "TZ", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH",
    "LD_LIBRARY_PATH", "PYTHONPATH", "HIERA_DEVICE", "HIERA_NVRTC", "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "TORCH_CUDA_ARCH_LIST", "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_NVML_BASED_CUDA_CHECK", "CUDA_LAUNCH_BLOCKING", "CC", "CXX", "MAX_JOBS",
)
_ALLOWED_PREFIXES = ("LC_",)
# Where secrets usually live in a home directory: hidden from the candidate.
SECRET_PLACES = (".ssh", ".aws", ".azure", ".config", ".netrc", ".gnupg", ".docker", ".kube", ".git-credentials",
                 ".npmrc", ".pypirc", ".bash_history", ".python_history", ".zsh_history", ".cache/hiera",
                 ".hiera", ".env")
_SECRET_NAME = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
NOBODY = "nobody"

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG = 1


def environment(scratch, shared_cache, base=None):
    """The candidate process's environment: the allowlist of `base`, and
    every cache and temporary directory pointed into the sandbox.

    torch.compile's caches (inductor's and Triton's) are the process's own,
    in its scratch directory: never the trusted runner's (isolation.
    trusted_compile_cache), which a candidate must not be able to fill with
    code the trusted side's own torch.compile would load; nor shared between
    candidates, so a compiled candidate's first call is a cold compile, the
    cost its report states, and no candidate's compiled code is another's.
    Inductor compiles with a pool of compile_threads() workers: children of
    the candidate process, in its process group (ended with it), counted in
    its host memory (isolation's watch reads the whole process tree) and
    under the sandbox user's process limit (drop_privileges: RLIMIT_NPROC)."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if k in ALLOWED_ENV or k.startswith(_ALLOWED_PREFIXES)}
    tmp = os.path.join(scratch, "tmp")
    env.update({
        "HOME": scratch, "TMPDIR": tmp, "XDG_CACHE_HOME": os.path.join(scratch, ".cache"),
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
        "HIERA_CACHE_DIR": shared_cache,
        "TORCH_EXTENSIONS_DIR": os.path.join(shared_cache, "torch_extensions"),
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(scratch, "inductor"),
        "TRITON_CACHE_DIR": os.path.join(scratch, "triton"),
        "TORCHINDUCTOR_COMPILE_THREADS": str(compile_threads(base)),
        "CUDA_CACHE_PATH": os.path.join(shared_cache, "nv"),
    })
    return env


MAX_COMPILE_THREADS = 8


def compile_threads(base=None):
    """Inductor's compile workers for a candidate: HIERA_CANDIDATE_COMPILE_THREADS,
    else the machine's cores up to MAX_COMPILE_THREADS. One worker made a
    torch.compile candidate of a GPT-2 block cost 16 s and its max-autotune
    variant over 100 s on an H200 (2026-12-02): Triton's kernels compiled in turn."""
    base = os.environ if base is None else base
    value = base.get("HIERA_CANDIDATE_COMPILE_THREADS")
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            raise ValueError("HIERA_CANDIDATE_COMPILE_THREADS must be a whole number of compile workers, not %r"
                             % value)
    return max(1, min(MAX_COMPILE_THREADS, os.cpu_count() or 1))


def secret_values(base=None, minimum=8):
    """Values of the variables whose names say they hold secrets: redacted
    from any text a candidate produced, as a second line behind the
    allowlist (a candidate should never have seen them)."""
    base = os.environ if base is None else base
    return sorted({v for k, v in base.items()
                   if any(w in k.upper() for w in _SECRET_NAME) and isinstance(v, str) and len(v) >= minimum},
                  key=len, reverse=True)


def redact(text, secrets):
    if not isinstance(text, str):
        return text
    for s in secrets:
        if s in text:
            text = text.replace(s, "[redacted]")
    return text


# --- inside the candidate process ---------------------------------------------------

_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        _libc.unshare.argtypes = [ctypes.c_int]
        _libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return _libc


def _fail(what):
    e = ctypes.get_errno()
    return "%s: %s" % (what, os.strerror(e) if e else "failed")


def _mount(source, target, fstype, flags, data=None):
    enc = lambda s: s.encode() if isinstance(s, str) else s
    if _c().mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise OSError(ctypes.get_errno(), _fail("mount %s" % target))


class Protections(object):
    """What is in force, by name; a reason for each that is not."""

    def __init__(self):
        self.state = {}

    def ok(self, name, detail="in force"):
        self.state[name] = detail

    def missing(self, name, reason):
        self.state[name] = "not in force: " + reason

    def as_dict(self):
        return dict(self.state)


def die_with_parent(protections, parent):
    if _c().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        protections.missing("dies_with_parent", _fail("prctl(PR_SET_PDEATHSIG)"))
        return
    if os.getppid() != parent:
        os._exit(70)  # the runner is already gone: nobody would end us later
    protections.ok("dies_with_parent")


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def enter_namespaces(protections, read_only, home):
    """A network namespace (no network) and a mount namespace (read-only
    user files, hidden secret places). As root directly; otherwise inside a
    user namespace that maps the user to itself. Before any thread starts."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWNET
    if uid != 0:
        flags |= CLONE_NEWUSER
    if _c().unshare(flags) != 0:
        reason = _fail("unshare(%s)" % ("NEWNS|NEWNET" if uid == 0 else "NEWUSER|NEWNS|NEWNET"))
        protections.missing("no_network", reason)
        protections.missing("read_only_user_files", reason)
        protections.missing("hidden_secret_places", reason)
        return False
    if uid != 0:
        try:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", "%d %d 1" % (uid, uid))
            _write("/proc/self/gid_map", "%d %d 1" % (gid, gid))
        except OSError as e:
            protections.missing("read_only_user_files", "user namespace maps: %s" % e)
    protections.ok("no_network", "a network namespace of its own, with no interfaces up")
    try:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError as e:
        protections.missing("read_only_user_files", str(e))
        protections.missing("hidden_secret_places", str(e))
        return True
    done = []
    for path in read_only:
        try:
            _mount(path, path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY)
            done.append(path)
        except OSError as e:
            protections.missing("read_only_user_files", "%s: %s" % (path, e))
            break
    else:
        protections.ok("read_only_user_files", ", ".join(done) or "none to protect")
    hidden = []
    for name in SECRET_PLACES:
        path = os.path.join(home, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=16k,mode=000")
            elif os.path.isfile(path) and not os.path.islink(path):
                _mount("/dev/null", path, None, MS_BIND)
            else:
                continue
            hidden.append(path)
        except OSError as e:
            protections.missing("hidden_secret_places", "%s: %s" % (path, e))
            break
    else:
        protections.ok("hidden_secret_places", ", ".join(hidden) or "none found")
    return True


def set_limits(protections, file_bytes=8 << 30):
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        cap = file_bytes if hard == resource.RLIM_INFINITY else min(hard, file_bytes)
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
        protections.ok("resource_limits", "no core dumps, files of at most %d GiB" % (cap >> 30))
    except (ValueError, OSError) as e:
        protections.missing("resource_limits", str(e))


def _readable_by_others(path):
    """Whether a user other than the owner can read path (every directory
    on the way searchable by others)."""
    path = os.path.realpath(path)
    try:
        st = os.stat(path)
        if not st.st_mode & 0o004:
            return False
        parent = os.path.dirname(path)
        while True:
            if not os.stat(parent).st_mode & 0o001:
                return False
            if parent == "/":
                return True
            parent = os.path.dirname(parent)
    except OSError:
        return False


def drop_privileges(protections, needed, writable):
    """Root becomes `nobody`, if nobody can still read what the process
    needs (the Python installation, torch, hiera's package); the scratch
    directories are handed over first."""
    if os.getuid() != 0:
        protections.ok("unprivileged_user", "runs as %s (not root)" % pwd.getpwuid(os.getuid()).pw_name)
        return
    try:
        nobody = pwd.getpwnam(NOBODY)
    except KeyError:
        protections.missing("unprivileged_user", "there is no user %r" % NOBODY)
        return
    unreadable = [p for p in needed if not _readable_by_others(p)]
    if unreadable:
        protections.missing("unprivileged_user", "%s cannot be read by %s: the candidate runs as root"
                            % (unreadable[0], NOBODY))
        return
    try:
        for root in writable:
            for d, _, files in os.walk(root):
                for path in [d] + [os.path.join(d, f) for f in files]:
                    if os.lstat(path).st_uid != nobody.pw_uid:
                        os.lchown(path, nobody.pw_uid, nobody.pw_gid)
        os.setgroups([])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)
    except OSError as e:
        protections.missing("unprivileged_user", "setuid(%s): %s" % (NOBODY, e))
        return
    try:
        os.setuid(0)
        protections.missing("unprivileged_user", "root could be regained after setuid")
        os._exit(71)
    except OSError as e:
        if e.errno != errno.EPERM:
            raise
    resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))
    protections.ok("unprivileged_user", "runs as %s (uid %d), at most 256 processes" % (NOBODY, nobody.pw_uid))


SCMP_ACT_ALLOW = 0x7fff0000
SCMP_ACT_ERRNO_EPERM = 0x00050000 | errno.EPERM
SCMP_FLTATR_CTL_TSYNC = 4   # the filter on every thread (CUDA's and torch's are already running)
NR_SCMP_ERROR = -1          # seccomp_syscall_resolve_name: no such call on this architecture


def denied_syscalls():
    """The names of denied_syscalls.txt, in its order."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "denied_syscalls.txt")) as f:
        return [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]


def _libseccomp():
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.restype = None
    return lib


def filter_syscalls(protections, names=None):
    """Every thread of the process, and all it starts, gets EPERM for the
    calls in `names` (denied_syscalls.txt). Last: the sandbox's own set-up
    uses some of them. A call this architecture lacks is left out."""
    names = denied_syscalls() if names is None else names
    try:
        lib = _libseccomp()
    except OSError as e:
        protections.missing("syscall_filter", "libseccomp.so.2 cannot be loaded: %s" % e)
        return
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        protections.missing("syscall_filter", "seccomp_init failed")
        return
    try:
        denied = 0
        for name in names:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr == NR_SCMP_ERROR:
                continue
            rc = lib.seccomp_rule_add(ctx, SCMP_ACT_ERRNO_EPERM, nr, 0)
            if rc != 0:
                protections.missing("syscall_filter", "seccomp_rule_add(%s): %s" % (name, os.strerror(-rc)))
                return
            denied += 1
        for call, step in (("seccomp_attr_set(TSYNC)", lambda: lib.seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)),
                           ("seccomp_load", lambda: lib.seccomp_load(ctx))):
            rc = step()
            if rc != 0:
                protections.missing("syscall_filter", "%s: %s" % (call, os.strerror(-rc)))
                return
        protections.ok("syscall_filter", "%d system calls denied (mounts, namespaces, ptrace, the clock, "
                       "the kernel's modules and keyrings, io_uring)" % denied)
    finally:
        lib.seccomp_release(ctx)


def package_dir():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def python_paths():
    paths = {sys.prefix, os.path.realpath(sys.executable), package_dir()}
    try:
        import importlib.util
        spec = importlib.util.find_spec("torch")
        if spec is not None and spec.origin:
            paths.add(os.path.dirname(spec.origin))
    except (ImportError, ValueError):
        pass
    return sorted(paths)
