"""The channel between the trusted runner and a candidate process: messages
and tensors, nothing else.

Messages are length-prefixed JSON on a Unix socket pair (never pickle: what
the candidate side sends is data, parsed with limits). Tensors travel as
descriptors of shared memory: on the CPU a memfd (its descriptor passed with
the message), on CUDA a buffer of its own from cuMemAlloc exported with
cuIpcGetMemHandle. Each shared buffer holds one tensor and nothing else, so a
candidate given an input can reach that input's bytes and no other memory of
the trusted process (a caching-allocator segment could hold other tensors).
"""

import ctypes
import json
import mmap
import os
import select
import socket
import struct
import time

import torch

MAX_MESSAGE_BYTES = 96 << 20   # a load message carries the candidate's source
MAX_FDS = 64
_HEADER = struct.Struct(">I")

DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
    "bool": torch.bool, "complex64": torch.complex64, "complex128": torch.complex128,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


class ExchangeError(Exception):
    """The other side broke the exchange: a malformed message, a descriptor
    that does not fit, a closed socket, or no reply in time."""


class Timeout(ExchangeError):
    pass


# --- messages ------------------------------------------------------------------

class Channel(object):
    """One end of the socket pair. recv() waits at most `timeout` seconds;
    `watch` (if given) is called about every 0.2 s while waiting and may raise
    to abandon the wait (the trusted side checks the child's memory there)."""

    def __init__(self, sock):
        self.sock = sock
        self._pending_fds = []

    def fileno(self):
        return self.sock.fileno()

    def send(self, message, fds=()):
        data = json.dumps(message, allow_nan=True).encode("utf-8")
        if len(data) > MAX_MESSAGE_BYTES:
            raise ExchangeError("a message of %d bytes is over the exchange's limit of %d bytes"
                                % (len(data), MAX_MESSAGE_BYTES))
        payload = _HEADER.pack(len(data)) + data
        if fds:
            sent = socket.send_fds(self.sock, [payload[:_HEADER.size]], list(fds))
            if sent != _HEADER.size:
                raise ExchangeError("short write on the exchange socket")
            payload = payload[_HEADER.size:]
        try:
            self.sock.sendall(payload)
        except OSError as e:
            raise ExchangeError("the other side closed the exchange (%s)" % e)

    def recv(self, timeout=None, watch=None):
        """-> (message, [fds])."""
        deadline = None if timeout is None else time.monotonic() + timeout
        header, fds = self._read(_HEADER.size, deadline, watch, want_fds=True)
        (length,) = _HEADER.unpack(header)
        if length > MAX_MESSAGE_BYTES:
            _close_all(fds)
            raise ExchangeError("a message announced %d bytes, over the exchange's limit of %d"
                                % (length, MAX_MESSAGE_BYTES))
        body, more = self._read(length, deadline, watch, want_fds=False)
        fds += more
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            _close_all(fds)
            raise ExchangeError("a message that is not JSON (%s)" % e)
        if not isinstance(message, dict):
            _close_all(fds)
            raise ExchangeError("a message that is not a JSON object")
        return message, fds

    def _read(self, n, deadline, watch, want_fds):
        chunks, got, fds = [], 0, []
        while got < n:
            wait = 0.2 if deadline is None else max(0.0, min(0.2, deadline - time.monotonic()))
            ready, _, _ = select.select([self.sock], [], [], wait)
            if not ready:
                if watch is not None:
                    watch()
                if deadline is not None and time.monotonic() >= deadline:
                    _close_all(fds)
                    raise Timeout("no reply in time")
                continue
            if want_fds and not fds:
                data, anc, _, _ = socket.recv_fds(self.sock, n - got, MAX_FDS)
                fds.extend(anc)
            else:
                data = self.sock.recv(min(n - got, 1 << 20))
            if not data:
                _close_all(fds)
                raise ExchangeError("the other side closed the exchange")
            chunks.append(data)
            got += len(data)
        return b"".join(chunks), fds

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def _close_all(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


# --- descriptors ----------------------------------------------------------------------

def describe_value(x):
    """A non-tensor output leaf as JSON: numbers, bools, None."""
    if x is None or isinstance(x, (bool, int, float)):
        return {"kind": "value", "value": x}
    return {"kind": "unsupported", "type": type(x).__name__}


def check_descriptor(d, limit_bytes):
    """Validates a tensor descriptor from the other side; returns (dtype, shape, nbytes)."""
    if not isinstance(d, dict) or d.get("kind") != "tensor":
        raise ExchangeError("a tensor descriptor that is not an object of kind \"tensor\"")
    dtype = DTYPES.get(d.get("dtype"))
    shape = d.get("shape")
    if dtype is None:
        raise ExchangeError("a tensor of an unknown dtype %r" % (d.get("dtype"),))
    if not isinstance(shape, list) or len(shape) > 16 or \
            not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < (1 << 40) for s in shape):
        raise ExchangeError("a tensor shape that is not a list of at most 16 sizes")
    numel = 1
    for s in shape:
        numel *= s
    nbytes = numel * torch.empty((), dtype=dtype).element_size()
    if nbytes > limit_bytes:
        raise ExchangeError("a tensor of %d bytes, over the %d the exchange accepts" % (nbytes, limit_bytes))
    return dtype, shape, nbytes


def _view(storage_u8, dtype, shape):
    t = storage_u8
    if dtype != torch.uint8:
        t = t.view(dtype)
    return t.view(shape)


# --- CPU: memfd buffers --------------------------------------------------------------

class HostBuffer(object):
    """A memfd of `nbytes` mapped here; .tensor(dtype, shape) views it."""

    def __init__(self, nbytes, fd=None, writable=True):
        self.nbytes = nbytes
        self.owned = fd is None
        self.fd = os.memfd_create("hiera-exchange", os.MFD_CLOEXEC) if fd is None else fd
        if self.owned:
            os.ftruncate(self.fd, max(1, nbytes))
        size = os.fstat(self.fd).st_size
        if size < nbytes:
            os.close(self.fd)
            raise ExchangeError("a shared buffer of %d bytes where %d were announced" % (size, nbytes))
        self.map = mmap.mmap(self.fd, max(1, nbytes), mmap.MAP_SHARED,
                             mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0))
        self.writable = writable
        if not self.owned:  # the mapping outlives the descriptor
            os.close(self.fd)
            self.fd = -1

    def tensor(self, dtype, shape, nbytes=None):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a read-only map: torch warns that the buffer is not writable
            n = self.nbytes if nbytes is None else nbytes
            if n > self.nbytes:
                raise ExchangeError("a tensor of %d bytes in a shared buffer of %d" % (n, self.nbytes))
            u8 = torch.frombuffer(self.map, dtype=torch.uint8, count=n) if n else torch.empty(0, dtype=torch.uint8)
        return _view(u8, dtype, shape)

    def close(self):
        try:
            self.map.close()
        except (BufferError, ValueError):
            pass  # a view is still alive; the mapping goes with it
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1


# --- CUDA: IPC buffers ---------------------------------------------------------------

class _IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


_ipc_lib = None


def _driver():
    global _ipc_lib
    if _ipc_lib is not None:
        return _ipc_lib
    from . import nvrtc_runtime
    lib = nvrtc_runtime._load_driver()
    U, I, S = ctypes.c_uint, ctypes.c_int, ctypes.c_size_t
    for name, args in {
        "cuMemAlloc_v2": [ctypes.POINTER(ctypes.c_uint64), S],
        "cuMemFree_v2": [ctypes.c_uint64],
        "cuIpcGetMemHandle": [ctypes.POINTER(_IpcHandle), ctypes.c_uint64],
        "cuIpcOpenMemHandle_v2": [ctypes.POINTER(ctypes.c_uint64), _IpcHandle, U],
        "cuIpcCloseMemHandle": [ctypes.c_uint64],
        "cuMemGetAddressRange_v2": [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(S), ctypes.c_uint64],
    }.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, I
    _ipc_lib = lib
    return lib


def export_device_memory(ptr):
    """(IPC handle hex, offset) of the allocation that holds device address
    ptr: what another process opens to read it in place."""
    lib = _driver()
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr), "cuMemGetAddressRange")
    h = _IpcHandle()
    _check(lib.cuIpcGetMemHandle(ctypes.byref(h), base.value), "cuIpcGetMemHandle")
    return ctypes.string_at(ctypes.addressof(h), 64).hex(), int(ptr - base.value)


def _check(result, what):
    from . import nvrtc_runtime
    nvrtc_runtime._check(result, what)


class _CudaArray(object):
    """What torch.as_tensor needs to view raw device memory as bytes."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 2, "strides": None}


class DeviceBuffer(object):
    """A device allocation of its own (cuMemAlloc) or one opened from another
    process's IPC handle; .tensor(dtype, shape) views it on torch's device."""

    def __init__(self, device, nbytes=None, handle=None):
        from . import nvrtc_runtime
        self.device = device
        self.opened = handle is not None
        lib = _driver()
        nvrtc_runtime._current_context(device.index)
        ptr = ctypes.c_uint64()
        if handle is None:
            _check(lib.cuMemAlloc_v2(ctypes.byref(ptr), max(1, nbytes)), "cuMemAlloc")
            self.nbytes = nbytes
        else:
            raw = bytes.fromhex(handle) if isinstance(handle, str) else b""
            if len(raw) != 64:
                raise ExchangeError("a CUDA IPC handle that is not 64 bytes of hex")
            h = _IpcHandle()
            ctypes.memmove(ctypes.byref(h), raw, 64)
            result = lib.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), h, 1)  # LAZY_ENABLE_PEER_ACCESS
            if result != 0:
                raise ExchangeError("the CUDA IPC handle could not be opened (CUresult %d): not memory the other "
                                    "process exported" % result)
            base, size = ctypes.c_uint64(), ctypes.c_size_t()
            _check(lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr), "cuMemGetAddressRange")
            self.nbytes = int(size.value)
        self.ptr = int(ptr.value)
        self._handle = None

    def handle(self):
        if self._handle is None:
            h = _IpcHandle()
            _check(_driver().cuIpcGetMemHandle(ctypes.byref(h), self.ptr), "cuIpcGetMemHandle")
            self._handle = ctypes.string_at(ctypes.addressof(h), 64).hex()
        return self._handle

    def tensor(self, dtype, shape, nbytes, offset=0):
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ExchangeError("a tensor of %d bytes at offset %d in a shared buffer of %d"
                                % (nbytes, offset, self.nbytes))
        u8 = torch.as_tensor(_CudaArray(self.ptr + offset, max(1, nbytes)), device=self.device)[:nbytes]
        return _view(u8, dtype, shape)

    def close(self):
        if self.ptr:
            torch.cuda.synchronize(self.device)
            lib = _driver()
            if self.opened:
                lib.cuIpcCloseMemHandle(self.ptr)
            else:
                lib.cuMemFree_v2(self.ptr)
            self.ptr = 0
