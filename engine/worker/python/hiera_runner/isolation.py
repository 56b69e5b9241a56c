"""The trusted side's handle on a candidate process (candidate_host.py).

The runner never runs candidate code itself: it starts a sandboxed process
per candidate (sandbox.py), hands it inputs in shared memory it owns,
reads back the outputs through shared memory the candidate owns, and keeps
every reference output, comparison, timer and verdict to itself. Replies are
parsed as untrusted data; a process that dies, hangs, outgrows its memory
limit or breaks the exchange is ended and reported as the candidate's
failure, and the runner itself goes on with its CUDA context intact.

Spare processes are kept started ahead, so a candidate finds torch imported
and CUDA up (a start costs a few seconds, more than a small candidate's whole
evaluation): as many as cover one start at the rate evaluations finish.
"""

import os
import shutil
import signal
import subprocess
import time

import torch

from . import candidate_spawn, exchange, sandbox
from .candidate_spawn import memory_limit, remove_scratch_root, trusted_compile_cache  # noqa: F401 (the runner's names)

READY_TIMEOUT_S = 120.0
LOAD_TIMEOUT_S = float(os.environ.get("HIERA_CANDIDATE_LOAD_TIMEOUT_S", "900"))   # load_inline builds
# Per call, the first included: a torch.compile'd candidate compiles in its first forward (10-40 s
# cold for a KernelBench-sized module in its default mode, in one thread: sandbox.environment), well
# inside this. The tighter bound is the engine's per-evaluation job timeout (evaluate_timeout).
CALL_TIMEOUT_S = float(os.environ.get("HIERA_CANDIDATE_TIMEOUT_S", "300"))
_STDERR_TAIL = 4000


class CandidateFailure(Exception):
    """The candidate process failed: `check` and `message` as a verification
    failure reports them; `where` is the phase (load, forward, ...)."""

    def __init__(self, check, message, where="forward"):
        Exception.__init__(self, message)
        self.check = check
        self.message = message
        self.where = where


class CandidateProcess(object):
    def __init__(self, device, spawned=None):
        """Starts a candidate process for device, or adopts `spawned`
        (candidate_spawn.spawn for the same device)."""
        self.device = device
        if spawned is None:
            spawned = candidate_spawn.spawn(_device_name(device))
        self.secrets = spawned.secrets
        self.scratch = spawned.scratch
        self.stderr_path = spawned.stderr_path
        self.proc = spawned.proc
        self.channel = exchange.Channel(spawned.sock)
        self.spawned_at = spawned.spawned_at
        self.ready = None
        self.limit = memory_limit()
        self.first_call_ms = None  # the wall time of the candidate's first forward (a torch.compile compiles in it)
        self.in_buffers = []   # exchange buffers for inputs, by position
        self.opened = {}       # the candidate's output buffers, by IPC handle
        self.exported = set()  # our own input handles

    # --- lifecycle -------------------------------------------------------------------
    def wait_ready(self):
        if self.ready is None:
            message, fds = self._recv(READY_TIMEOUT_S, "start")
            exchange._close_all(fds)
            if message.get("op") != "ready" or not isinstance(message.get("protections"), dict):
                raise self._broke("start", "its first message was not the ready message")
            self.ready = message
            at = message.get("at")
            if isinstance(at, (int, float)) and not isinstance(at, bool):
                _pace.started(self.device, at - self.spawned_at)
            if message.get("cuda_error") and self.device.type == "cuda":
                raise CandidateFailure("runtime", "the candidate process could not open the GPU: %s"
                                       % self._text(message["cuda_error"]), "start")
        return self.ready

    @property
    def protections(self):
        return {str(k): self._text(str(v)) for k, v in ((self.ready or {}).get("protections") or {}).items()}

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        try:
            if self.alive():
                try:
                    self.channel.send({"op": "exit"})
                except exchange.ExchangeError:
                    pass
                try:
                    self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            self._kill()
            for buf in list(self.opened.values()) + [b for b in self.in_buffers if b is not None]:
                try:
                    buf.close()
                except Exception:
                    pass
            self.opened, self.in_buffers = {}, []
            self.channel.close()
            shutil.rmtree(self.scratch, ignore_errors=True)

    def _kill(self):
        candidate_spawn.kill_group(self.proc)

    # --- ops -------------------------------------------------------------------------
    def load(self, source, init, seed):
        self.wait_ready()
        self.channel.send({"op": "load", "source": source, "init": [{"kind": "value", "value": _encode_value(v)} for v in init], "seed": seed})
        reply = self._reply(LOAD_TIMEOUT_S, "load")
        if not reply.get("ok"):
            check = reply.get("check") if reply.get("check") in ("compile", "runtime") else "runtime"
            message = self._text(reply.get("message"))
            if reply.get("where") == "construction":
                message = "in construction: " + message
            raise CandidateFailure(check, message, "load")

    def stage(self, args):
        """Copies the trusted inputs into exchange buffers: the candidate's
        own copies. Returns (descriptors, fds, views of those copies)."""
        descs, fds, views = [], [], []
        for k, x in enumerate(args):
            if not isinstance(x, torch.Tensor):
                descs.append({"kind": "value", "value": _encode_value(x)})
                views.append(None)
                continue
            x = x.detach()
            nbytes = x.numel() * x.element_size()
            buf = self._in_buffer(k, nbytes)
            view = buf.tensor(x.dtype, list(x.shape), nbytes)
            view.copy_(x)
            d = {"kind": "tensor", "dtype": exchange.DTYPE_NAMES[x.dtype], "shape": list(x.shape), "nbytes": nbytes}
            if x.requires_grad:
                d["requires_grad"] = True
            if self.device.type == "cuda":
                d["handle"] = buf.handle()
                self.exported.add(d["handle"])
            else:
                d["fd_index"] = len(fds)
                fds.append(buf.fd)
            descs.append(d)
            views.append(view)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return descs, fds, views

    def run(self, staged, seed, poison=None, fill=False, timed=False, output_bytes=0):
        """One forward; returns (reply, wall_ms): the wall time across the
        process boundary, from the request to the reply."""
        descs, fds, _ = staged
        self.release_outputs()
        message = {"op": "run", "inputs": descs, "seed": seed, "poison": poison, "fill": bool(fill),
                   "timed": bool(timed), "output_bytes": int(output_bytes)}
        t0 = time.perf_counter()
        self.channel.send(message, fds=fds)
        reply = self._reply(CALL_TIMEOUT_S, "forward")
        wall = (time.perf_counter() - t0) * 1e3
        if self.first_call_ms is None:
            self.first_call_ms = wall
        if not reply.get("ok"):
            raise CandidateFailure("runtime", self._text(reply.get("message")), str(reply.get("where", "forward")))
        elapsed = reply.get("elapsed_ms")
        if timed and not (isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool) and elapsed >= 0):
            raise self._broke("forward", "a timed call's reply has no elapsed time")
        return reply, wall

    def calibrate(self, staged, rounds, flush):
        """Before the candidate is loaded: (wall - reported) of timed probe
        calls, the gap the harness itself puts between the candidate's clock
        and ours (context switch, launch, the exchange). Sorted, in ms."""
        descs, fds, _ = staged
        gaps = []
        for _ in range(rounds):
            flush()
            t0 = time.perf_counter()
            self.channel.send({"op": "calibrate", "inputs": descs}, fds=fds)
            reply = self._reply(CALL_TIMEOUT_S, "calibrate")
            wall = (time.perf_counter() - t0) * 1e3
            elapsed = reply.get("elapsed_ms")
            if not reply.get("ok") or not isinstance(elapsed, (int, float)) or isinstance(elapsed, bool):
                raise self._broke("calibrate", "the calibration call failed: %s" % self._text(reply.get("message")))
            gaps.append(wall - float(elapsed))
        gaps.sort()
        return gaps

    def release_outputs(self):
        """Closes the mappings of the candidate's outputs (before its next
        call, which may free or reuse that memory)."""
        if self.opened:
            torch.cuda.synchronize(self.device)
            for buf in self.opened.values():
                buf.close()
            self.opened = {}

    def ping(self, staged=None):
        """The exchange's own round trip: the same message as a call (its
        inputs decoded there), no forward."""
        descs, fds, _ = staged if staged is not None else ([], [], [])
        t0 = time.perf_counter()
        self.channel.send({"op": "ping", "inputs": descs}, fds=fds)
        self._reply(CALL_TIMEOUT_S, "forward")
        return (time.perf_counter() - t0) * 1e3

    def fetch(self, limit_bytes):
        """The last call's outputs: tensors viewing the candidate's buffers
        (valid until the next call), numbers, None."""
        self.channel.send({"op": "fetch"})
        reply, fds = self._recv(CALL_TIMEOUT_S, "fetch")
        try:
            if not reply.get("ok"):
                raise CandidateFailure("runtime", self._text(reply.get("message")), "fetch")
            descs = reply.get("outputs")
            if not isinstance(descs, list) or len(descs) > 4096:
                raise self._broke("fetch", "its outputs are not a list")
            out = []
            for d in descs:
                if isinstance(d, dict) and d.get("kind") == "value":
                    v = d.get("value")
                    if not (v is None or isinstance(v, (bool, int, float))):
                        raise self._broke("fetch", "an output value that is not a number")
                    out.append(v)
                    continue
                if isinstance(d, dict) and d.get("kind") == "unsupported":
                    out.append(_Unsupported(str(d.get("type"))[:80]))
                    continue
                try:
                    dtype, shape, nbytes = exchange.check_descriptor(d, limit_bytes)
                except exchange.ExchangeError as e:
                    raise self._broke("fetch", str(e))
                out.append(self._output_tensor(d, dtype, shape, nbytes, fds))
            return out
        finally:
            exchange._close_all(fds)

    def profile(self, staged, calls):
        descs, fds, _ = staged
        self.channel.send({"op": "profile", "inputs": descs, "calls": int(calls)}, fds=fds)
        reply = self._reply(CALL_TIMEOUT_S * 2, "profile")
        if not reply.get("ok"):
            raise CandidateFailure("runtime", self._text(reply.get("message")), "profile")
        kernels = reply.get("kernels")
        if not isinstance(kernels, list):
            raise self._broke("profile", "its kernel list is not a list")
        return kernels

    # --- helpers ---------------------------------------------------------------------
    def _output_tensor(self, d, dtype, shape, nbytes, fds):
        if self.device.type == "cuda":
            handle = d.get("handle")
            if nbytes == 0:
                return torch.empty(shape, dtype=dtype, device=self.device)
            offset = d.get("offset", 0)
            if not isinstance(offset, int) or isinstance(offset, bool):
                raise self._broke("fetch", "an output offset that is not an integer")
            if not isinstance(handle, str):
                raise self._broke("fetch", "a CUDA output without an IPC handle")
            if handle in self.exported:
                raise CandidateFailure("aliasing", "an output is the memory of an input the runner handed over, "
                                       "not an output of its own", "fetch")
            buf = self.opened.get(handle)
            if buf is None:
                try:
                    buf = exchange.DeviceBuffer(self.device, handle=handle)
                except exchange.ExchangeError as e:
                    raise self._broke("fetch", str(e))
                self.opened[handle] = buf
            try:
                return buf.tensor(dtype, shape, nbytes, offset)
            except exchange.ExchangeError as e:
                raise self._broke("fetch", str(e))
        index = d.get("fd_index")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(fds):
            raise self._broke("fetch", "a CPU output without its memory")
        try:
            buf = exchange.HostBuffer(nbytes, fd=os.dup(fds[index]), writable=False)
        except (exchange.ExchangeError, OSError, ValueError) as e:
            raise self._broke("fetch", str(e))
        return buf.tensor(dtype, shape, nbytes)

    def _in_buffer(self, k, nbytes):
        while len(self.in_buffers) <= k:
            self.in_buffers.append(None)
        buf = self.in_buffers[k]
        if buf is None or buf.nbytes < nbytes:
            if buf is not None:
                buf.close()
            buf = exchange.DeviceBuffer(self.device, nbytes=nbytes) if self.device.type == "cuda" \
                else exchange.HostBuffer(nbytes)
            self.in_buffers[k] = buf
        return buf

    def _watch(self):
        if self.proc.poll() is not None:
            raise self._died()
        rss = _rss_bytes(self.proc.pid)
        if rss is not None and rss > self.limit:
            self._kill()
            raise CandidateFailure("runtime", "the candidate process (with its children) used %.1f GiB of host memory, over its limit of "
                                   "%.1f GiB (HIERA_CANDIDATE_MEMORY_BYTES)" % (rss / 2.0 ** 30, self.limit / 2.0 ** 30))

    def _recv(self, timeout, where):
        try:
            return self.channel.recv(timeout=timeout, watch=self._watch)
        except exchange.Timeout:
            self._kill()
            raise CandidateFailure("timeout", "the candidate did not answer within %d s (%s); its process was ended"
                                   % (timeout, where), where)
        except CandidateFailure:
            raise
        except exchange.ExchangeError as e:
            if self.proc.poll() is not None or not _wait_exit(self.proc, 2.0):
                raise self._died(where)
            raise self._broke(where, str(e))

    def _reply(self, timeout, where):
        message, fds = self._recv(timeout, where)
        exchange._close_all(fds)
        return message

    def _died(self, where="forward"):
        self._kill()
        code = self.proc.returncode
        how = ("was killed by signal %d (%s)" % (-code, _signal_name(-code))) if code is not None and code < 0 \
            else "exited with code %s" % code
        tail = self.stderr_tail()
        return CandidateFailure("runtime", "the candidate process %s during %s%s"
                                % (how, where, (": " + tail) if tail else ""), where)

    def _broke(self, where, what):
        self._kill()
        return CandidateFailure("protocol", "the candidate process broke the exchange (%s): %s; it was ended"
                                % (where, self._text(what)), where)

    def stderr_tail(self):
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - _STDERR_TAIL))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [l for l in text.strip().splitlines() if l.strip()]
        return self._text(" | ".join(lines[-6:]))

    def _text(self, text):
        """Text that came from the candidate: bounded, secrets redacted."""
        text = text if isinstance(text, str) else repr(text)
        if len(text) > 4000:
            text = text[:4000] + " ..."
        return sandbox.redact(text, self.secrets)


def _device_name(device):
    """The device as the candidate process opens it: "cpu" or "cuda:N"."""
    return str(device) if device.type == "cpu" else "cuda:%d" % device.index


class _Unsupported(object):
    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return "<a %s>" % self.type_name


def _encode_value(v):
    if isinstance(v, tuple):
        return {"tuple": [_encode_value(x) for x in v]}
    if isinstance(v, list):
        return [_encode_value(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, torch.dtype):
        return str(v)
    raise exchange.ExchangeError("a constructor argument or input of type %s cannot be handed to the candidate "
                                 "process (numbers, strings, lists and tuples can)" % type(v).__name__)


def _rss_bytes(pid):
    """Resident host memory of `pid` and its descendants (a candidate's
    torch.compile workers are its children); None when `pid` is gone."""
    total = _own_rss_bytes(pid)
    if total is None:
        return None
    for child in _descendants(pid):
        total += _own_rss_bytes(child) or 0
    return total


def _own_rss_bytes(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _descendants(pid, limit=4096):
    """Through /proc/PID/task/TID/children (Linux 3.5+, CONFIG_PROC_CHILDREN);
    nothing where the kernel does not list children."""
    found, todo = [], [pid]
    while todo and len(found) < limit:
        p = todo.pop()
        try:
            tasks = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for tid in tasks:
            try:
                with open("/proc/%d/task/%s/children" % (p, tid)) as f:
                    kids = [int(k) for k in f.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


def _wait_exit(proc, seconds):
    try:
        proc.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        return True


def _signal_name(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return "signal %d" % n


# --- spare processes ----------------------------------------------------------------

_spares = {}
MAX_SPARES_CUDA = 6


class _Pace(object):
    """Recent start times of candidate processes and wall times of evaluations, per
    device: how many spares keep a start ahead of the evaluations. The start time
    comes from the process's own ready message, so a candidate can skew it, but only
    within [the base count, MAX_SPARES_CUDA]: it costs memory, never a verdict."""

    def __init__(self):
        self.start_s = {}
        self.job_s = {}

    @staticmethod
    def _blend(old, new):
        return new if old is None else 0.5 * old + 0.5 * new

    def started(self, device, seconds):
        if 0.0 < seconds < READY_TIMEOUT_S:
            self.start_s[str(device)] = self._blend(self.start_s.get(str(device)), seconds)

    def finished(self, device, seconds):
        if seconds > 0.0:
            self.job_s[str(device)] = self._blend(self.job_s.get(str(device)), seconds)

    def spares(self, device, base, ceiling):
        start, job = self.start_s.get(str(device)), self.job_s.get(str(device))
        if start is None or job is None:
            return base
        return max(base, min(ceiling, int(start / job) + 2))


_pace = _Pace()


def _spare_count(device):
    """Processes kept started ahead: HIERA_CANDIDATE_SPARES, else on CUDA three
    and more while evaluations finish faster than a process starts (at most
    MAX_SPARES_CUDA: each holds a CUDA context), and one on the CPU."""
    if os.environ.get("HIERA_CANDIDATE_SPARES"):
        return max(0, int(os.environ["HIERA_CANDIDATE_SPARES"]))
    if device.type != "cuda":
        return 1
    return _pace.spares(device, 3, MAX_SPARES_CUDA)


def job_finished(device, seconds):
    """An evaluation's wall time, for the spares' pace."""
    _pace.finished(device, seconds)


def acquire(device):
    """A candidate process for device: a spare that is alive, else a new one.
    The pool is topped up at once, so spares start while this job runs."""
    pool = _spares.setdefault(str(device), [])
    _adopt_early(device, pool)
    proc = None
    while pool and proc is None:
        spare = pool.pop(0)
        if spare.alive():
            proc = spare
        else:
            spare.close()
    if proc is None:
        proc = CandidateProcess(device)
    prepare_spare(device)
    return proc


def _adopt_early(device, pool):
    """The process __main__ started before torch was imported, first in the
    pool: it has been starting longest."""
    early = candidate_spawn.take_early(_device_name(device))
    if early is not None:
        pool.insert(0, CandidateProcess(device, early))


def prepare_spare(device):
    pool = _spares.setdefault(str(device), [])
    pool[:] = [p for p in pool if p.alive() or p.close()]
    _adopt_early(device, pool)
    while len(pool) < _spare_count(device):
        try:
            pool.append(CandidateProcess(device))
        except OSError:
            return


def close_spares():
    candidate_spawn.take_early(None)
    for pool in _spares.values():
        for spare in pool:
            spare.close()
    _spares.clear()
