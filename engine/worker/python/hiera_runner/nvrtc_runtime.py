"""A small CUDA kernel runtime for candidates: NVRTC + the driver API via ctypes.

A candidate that brings its own kernel should not pay nvcc and the torch
headers (tens of seconds through load_inline) for every variant; NVRTC compiles
a kernel in well under a second and needs nothing but libnvrtc:

    from hiera_runner import nvrtc_runtime as rt
    k = rt.compile(SRC, "scale")                 # cubin for this GPU, cached
    k(grid, block, out, x, 2.0, n)               # tensors -> pointers, int -> int32, float -> float32
    k(grid, block, out, x, rt.float64(2.0), rt.int64(n), shared_mem=4096)

Launches go to torch.cuda.current_stream(), so they are ordered with torch's
own work and seen by the runner's timer. compile_to_ptx / compile_to_cubin
need no GPU (nor a driver): only libnvrtc.
"""

import ctypes
import glob
import hashlib
import os
import re
import struct
import sys

__all__ = ["compile", "compile_to_ptx", "compile_to_cubin", "Kernel", "CompileError", "CudaError",
           "LibraryNotFound", "int32", "int64", "uint32", "uint64", "float32", "float64", "pointer",
           "nvrtc_version", "find_nvrtc", "clear_cache"]

# --- errors -------------------------------------------------------------------


class LibraryNotFound(RuntimeError):
    """libnvrtc or libcuda could not be loaded; the message says where we looked."""


class NvrtcError(RuntimeError):
    pass


class CompileError(NvrtcError):
    """NVRTC rejected the source. .log is NVRTC's log; .diagnostics the
    errors and warnings in it as {"line", "severity", "message"}."""

    def __init__(self, name, log):
        self.log = log
        self.diagnostics = parse_log(log)
        first = next((d for d in self.diagnostics if d["severity"] == "error"), None)
        summary = ("line %d: %s" % (first["line"], first["message"])) if first else log.strip()[:500]
        NvrtcError.__init__(self, "NVRTC could not compile %s: %s\n%s" % (name, summary, log.strip()))


class CudaError(RuntimeError):
    """A CUDA driver call failed; .code is the CUresult, .name e.g. CUDA_ERROR_INVALID_VALUE."""

    def __init__(self, code, name, what, description=""):
        self.code = code
        self.name = name
        RuntimeError.__init__(self, "CUDA error: %s failed: %s (%d)%s" % (
            what, name, code, ": " + description if description else ""))


_LOG_LINE = re.compile(r"^(?P<file>[^\s()]+)\((?P<line>\d+)\): (?P<sev>error|warning|catastrophic error)[^:]*: (?P<msg>.*)$")


def parse_log(log):
    out = []
    for line in log.splitlines():
        m = _LOG_LINE.match(line.strip())
        if m:
            sev = "error" if "error" in m.group("sev") else "warning"
            out.append({"line": int(m.group("line")), "severity": sev, "message": m.group("msg").strip()})
    return out


# --- argument packing ------------------------------------------------------------


# The argument types' one definition is templates/scalars.py.tmpl, which a
# delivered module's runtime (deliver.py) is made of too: the same names,
# ranges, messages and kinds there as here. Added here what only this runtime
# uses: the ctypes type of each and its struct code in an 8-byte parameter slot.
SCALAR_TYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64", "pointer")


def _scalar_classes():
    from . import templates
    namespace = {"__name__": __name__}
    exec(compile(templates.read("scalars.py.tmpl"), templates.path("scalars.py.tmpl"), "exec"), namespace)
    return tuple(namespace[n] for n in ("_Scalar",) + SCALAR_TYPES)


_Scalar, int32, int64, uint32, uint64, float32, float64, pointer = _scalar_classes()
_Scalar.__doc__ = "A kernel argument of an explicit C type: int64(v), float64(v), ..."
_Scalar.ctype = None
_Scalar.slot = None  # its struct code in an 8-byte parameter slot


def _to_ctype(self):
    return self.ctype(self.value)


_Scalar.to_ctype = _to_ctype
pointer.__doc__ = "A raw device address (an int) passed as a pointer."
for _cls, _slot, _ctype in ((int32, "i4x", ctypes.c_int32), (int64, "q", ctypes.c_int64),
                            (uint32, "I4x", ctypes.c_uint32), (uint64, "Q", ctypes.c_uint64),
                            (float32, "f4x", ctypes.c_float), (float64, "d", ctypes.c_double),
                            (pointer, "Q", ctypes.c_void_p)):
    _cls.slot, _cls.ctype = _slot, _ctype
del _cls, _slot, _ctype


def pack_arg(arg, index=0):
    """One Python argument -> a ctypes object holding its value."""
    if isinstance(arg, _Scalar):
        return arg.to_ctype()
    if isinstance(arg, ctypes._SimpleCData):
        return arg
    if arg is None:
        return ctypes.c_void_p(None)
    if isinstance(arg, bool):
        return ctypes.c_bool(arg)
    if isinstance(arg, int):
        if not (-(1 << 31) <= arg < (1 << 31)):
            raise OverflowError("argument %d: %d does not fit in int32 (plain ints are passed as int32); "
                                "wrap it: nvrtc_runtime.int64(v)" % (index, arg))
        return ctypes.c_int32(arg)
    if isinstance(arg, float):
        return ctypes.c_float(arg)
    if _is_tensor(arg):
        if not arg.is_cuda:
            raise TypeError("argument %d is a tensor on %s; kernels take CUDA tensors (move it with .cuda())"
                            % (index, arg.device))
        return ctypes.c_void_p(arg.data_ptr())
    iface = getattr(arg, "__cuda_array_interface__", None)
    if isinstance(iface, dict) and "data" in iface:
        return ctypes.c_void_p(iface["data"][0])
    raise TypeError("argument %d: cannot pass a %s to a kernel (tensors, int, float, bool, None, or "
                    "nvrtc_runtime.int64/float64/... wrappers)" % (index, type(arg).__name__))


def _is_tensor(x):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def pack_args(args):
    """args -> (holders, params): params is the void*[] cuLaunchKernel takes;
    holders keep the values alive for the call."""
    holders = [pack_arg(a, i) for i, a in enumerate(args)]
    params = (ctypes.c_void_p * max(1, len(holders)))()
    for i, h in enumerate(holders):
        params[i] = ctypes.addressof(h)
    return holders, params


def _dims(value, what):
    if isinstance(value, int):
        value = (value,)
    value = tuple(int(v) for v in value)
    if not 1 <= len(value) <= 3 or any(v < 1 for v in value):
        raise ValueError("%s must be a positive int or a tuple of 1 to 3 positive ints, not %r" % (what, value))
    return value + (1,) * (3 - len(value))


def _fast_dims(value, what):
    # The common launch, a plain positive int, without building tuples from generators.
    return (value, 1, 1) if type(value) is int and value > 0 else _dims(value, what)


# --- the parameter block ------------------------------------------------------------
# A launch from Python used to build a ctypes object per argument and then the
# void*[]: 30 to 50 microseconds of CPU a launch on the H200's host, which a
# kernel of 0.2 ms no longer hides. Now one buffer a launch holds the void*[]
# and, after it, an 8-byte slot per argument with its C value at the start; one
# struct.pack_into writes both. A buffer per launch, not one per kernel: the
# driver reads it with the GIL released, so two threads must not share it.

_AS_IS, _TENSOR, _SCALAR, _NULL, _SIMPLE_CDATA, _ARRAY_INTERFACE = range(6)


def _slot_of(arg):
    """(how a value of arg's type is read, its slot's struct code), as pack_arg classifies it."""
    if isinstance(arg, _Scalar):
        return _SCALAR, arg.slot
    if isinstance(arg, ctypes._SimpleCData):
        if ctypes.sizeof(arg) > 8:
            raise TypeError("a %s is over 8 bytes: a kernel parameter slot holds 8" % type(arg).__name__)
        return _SIMPLE_CDATA, "Q"
    if arg is None:
        return _NULL, "Q"
    if isinstance(arg, bool):
        return _AS_IS, "?7x"
    if isinstance(arg, int):
        return _AS_IS, "i4x"
    if isinstance(arg, float):
        return _AS_IS, "f4x"
    if _is_tensor(arg):
        return _TENSOR, "Q"
    return _ARRAY_INTERFACE, "Q"


class _Block(object):
    """The layout of the parameter buffer of launches whose arguments have these types."""
    __slots__ = ("readers", "format", "words", "offsets")

    def __init__(self, args):
        slots = [_slot_of(a) for a in args]
        n = len(slots)
        self.readers = tuple(reader for reader, _ in slots)
        self.format = "<" + "Q" * n + "".join(code for _, code in slots)
        self.words = max(1, 2 * n)
        self.offsets = tuple(8 * (n + i) for i in range(n))  # slot i, from the buffer's start

    def values(self, args):
        out = []
        for reader, arg in zip(self.readers, args):
            if reader is _AS_IS:
                out.append(arg)
            elif reader is _TENSOR:
                if not arg.is_cuda:
                    raise TypeError("argument %d is a tensor on %s; kernels take CUDA tensors (move it with "
                                    ".cuda())" % (len(out), arg.device))
                out.append(arg.data_ptr())
            elif reader is _SCALAR:
                out.append(0 if arg.value is None else arg.value)
            elif reader is _NULL:
                out.append(0)
            elif reader is _SIMPLE_CDATA:
                out.append(int.from_bytes(bytes(arg).ljust(8, b"\0"), "little"))
            else:
                out.append(arg.__cuda_array_interface__["data"][0] or 0)
        return out

    def fill(self, args):
        """A new buffer holding args; its address is cuLaunchKernel's kernelParams. An int out of its C
        type's range is refused as pack_arg refuses it."""
        values = self.values(args)
        buffer = (ctypes.c_uint64 * self.words)()
        base = ctypes.addressof(buffer)
        try:
            struct.pack_into(self.format, buffer, 0, *[base + o for o in self.offsets], *values)
        except struct.error:
            for index, arg in enumerate(args):
                pack_arg(arg, index)
            raise
        return buffer


def _block_for(blocks, args):
    """The _Block for args' types, from `blocks` (a kernel's own), made on first use."""
    key = tuple(map(type, args))
    block = blocks.get(key)
    if block is None:
        for index, arg in enumerate(args):
            pack_arg(arg, index)  # refuses what cannot be passed, with the argument's index
        block = blocks[key] = _Block(args)
    return block


# --- finding the libraries ----------------------------------------------------------


def _cuda_homes():
    homes = []
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        if os.environ.get(var):
            homes.append(os.environ[var])
    homes += ["/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    return homes


def _site_dirs():
    """Directories that may hold the nvidia-* wheels (and torch) for this Python."""
    dirs = [p for p in sys.path if p and os.path.isdir(p)]
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        dirs.insert(0, os.path.dirname(os.path.dirname(torch.__file__)))
    seen, out = set(), []
    for d in dirs:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def _nvrtc_dirs():
    dirs = []
    for home in _cuda_homes():
        dirs += [os.path.join(home, "lib64"), os.path.join(home, "lib"),
                 os.path.join(home, "targets", "x86_64-linux", "lib"), os.path.join(home, "targets", "sbsa-linux", "lib")]
    for site in _site_dirs():
        # nvidia-cuda-nvrtc-cu12 (nvidia/cuda_nvrtc/lib), CUDA 13 wheels (nvidia/cu13/lib), torch's own bundle.
        dirs += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))
        dirs.append(os.path.join(site, "torch", "lib"))
    return dirs


def _nvrtc_files(directory):
    names = []
    for path in glob.glob(os.path.join(directory, "libnvrtc*.so*")):
        base = os.path.basename(path)
        if "builtins" in base or ".alt." in base:
            continue
        names.append(path)

    def rank(p):  # "libnvrtc.so" first, then the highest versioned name
        base = os.path.basename(p)
        version = [int(x) for x in re.findall(r"\d+", base.split(".so", 1)[1])]
        return (base != "libnvrtc.so", [-v for v in version])
    return sorted(names, key=rank)


_nvrtc = None
_nvrtc_path = None


def find_nvrtc():
    """The path of the libnvrtc that will be used (loading it), or raises LibraryNotFound."""
    _load_nvrtc()
    return _nvrtc_path


def _load_nvrtc():
    global _nvrtc, _nvrtc_path
    if _nvrtc is not None:
        return _nvrtc
    tried = []
    explicit = os.environ.get("HIERA_NVRTC")
    if explicit:
        candidates = [explicit]
    else:
        candidates = []
        for d in _nvrtc_dirs():
            candidates += _nvrtc_files(d)
        # Last, the system's loader path (ldconfig, LD_LIBRARY_PATH).
        candidates += ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"]
    for path in candidates:
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, str(e).split(":")[-1].strip()) if explicit or os.path.sep in path
                         else path)
            continue
        _declare_nvrtc(lib)
        _nvrtc, _nvrtc_path = lib, path
        return lib
    if explicit:
        raise LibraryNotFound("HIERA_NVRTC=%s could not be loaded: %s" % (explicit, "; ".join(tried)))
    raise LibraryNotFound(
        "libnvrtc (NVRTC, the CUDA runtime compiler) was not found. Looked in: %s; then the system's "
        "library path (%s). Set CUDA_HOME to a CUDA toolkit, HIERA_NVRTC to the library's path, or install "
        "the nvidia-cuda-nvrtc wheel." % (", ".join(_nvrtc_dirs()) or "(no directories)", ", ".join(tried[-4:])))


def _declare_nvrtc(lib):
    P, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    pp = ctypes.POINTER(ctypes.c_char_p)
    sigs = {
        "nvrtcVersion": [ctypes.POINTER(I), ctypes.POINTER(I)],
        "nvrtcCreateProgram": [ctypes.POINTER(P), ctypes.c_char_p, ctypes.c_char_p, I, pp, pp],
        "nvrtcDestroyProgram": [ctypes.POINTER(P)],
        "nvrtcCompileProgram": [P, I, pp],
        "nvrtcGetProgramLogSize": [P, ctypes.POINTER(S)],
        "nvrtcGetProgramLog": [P, ctypes.c_char_p],
        "nvrtcGetPTXSize": [P, ctypes.POINTER(S)],
        "nvrtcGetPTX": [P, ctypes.c_char_p],
        "nvrtcAddNameExpression": [P, ctypes.c_char_p],
        "nvrtcGetLoweredName": [P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, I
    lib.nvrtcGetErrorString.argtypes, lib.nvrtcGetErrorString.restype = [I], ctypes.c_char_p
    for name, args in (("nvrtcGetCUBINSize", [P, ctypes.POINTER(S)]), ("nvrtcGetCUBIN", [P, ctypes.c_char_p]),
                       ("nvrtcGetNumSupportedArchs", [ctypes.POINTER(I)]),
                       ("nvrtcGetSupportedArchs", [ctypes.POINTER(I)])):
        fn = getattr(lib, name, None)  # CUDA >= 11.2
        if fn is not None:
            fn.argtypes, fn.restype = args, I


def _nvrtc_check(result, what):
    if result != 0:
        msg = _load_nvrtc().nvrtcGetErrorString(result)
        raise NvrtcError("%s failed: %s (%d)" % (what, msg.decode() if msg else "?", result))


def nvrtc_version():
    lib = _load_nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    _nvrtc_check(lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return major.value, minor.value


def supported_archs():
    """The SM versions this NVRTC can generate code for, e.g. [75, 80, ..., 120]."""
    lib = _load_nvrtc()
    if not hasattr(lib, "nvrtcGetSupportedArchs"):
        return []
    n = ctypes.c_int()
    _nvrtc_check(lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)), "nvrtcGetNumSupportedArchs")
    archs = (ctypes.c_int * n.value)()
    _nvrtc_check(lib.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
    return list(archs)


def _include_options():
    """-I for the toolkit's headers (cuda_fp16.h, ...) where they can be found."""
    for home in _cuda_homes():
        inc = os.path.join(home, "include")
        if os.path.isfile(os.path.join(inc, "cuda_fp16.h")):
            return ["-I" + inc]
    for site in _site_dirs():
        for inc in sorted(glob.glob(os.path.join(site, "nvidia", "*", "include"))):
            if os.path.isfile(os.path.join(inc, "cuda_fp16.h")):
                return ["-I" + inc]
    return []


_ARCH_OPTION = re.compile(r"^(-arch|--gpu-architecture)(=(?P<value>.+))?$")


def _arch_in(options):
    options = list(options)
    for i, opt in enumerate(options):
        m = _ARCH_OPTION.match(opt)
        if m:
            return m.group("value") or (options[i + 1] if i + 1 < len(options) else None)
    return None


def _nvrtc_compile(source, name, options, arch, want):
    """Compiles; returns (image bytes, lowered name). want: "ptx" or "cubin"."""
    lib = _load_nvrtc()
    prog = ctypes.c_void_p()
    filename = (re.sub(r"[^A-Za-z0-9_]", "_", name) or "kernel") + ".cu"
    _nvrtc_check(lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), filename.encode(), 0, None, None),
                 "nvrtcCreateProgram")
    try:
        # A name expression makes NVRTC tell us the mangled name, so C++
        # (non-extern "C") and template kernels work too.
        _nvrtc_check(lib.nvrtcAddNameExpression(prog, name.encode()), "nvrtcAddNameExpression")
        opts = list(options)
        if not _arch_in(opts):
            opts.append("--gpu-architecture=" + arch)
        if not any(o.startswith("-I") or o.startswith("--include-path") for o in opts):
            opts += _include_options()
        encoded = [o.encode() for o in opts]
        argv = (ctypes.c_char_p * max(1, len(encoded)))(*encoded)
        result = lib.nvrtcCompileProgram(prog, len(encoded), argv)
        log = _program_log(lib, prog)
        if result != 0:
            raise CompileError(name, log or lib.nvrtcGetErrorString(result).decode())
        lowered = ctypes.c_char_p()
        _nvrtc_check(lib.nvrtcGetLoweredName(prog, name.encode(), ctypes.byref(lowered)), "nvrtcGetLoweredName")
        lowered_name = lowered.value.decode()
        size = ctypes.c_size_t()
        if want == "cubin":
            if not hasattr(lib, "nvrtcGetCUBIN"):
                raise NvrtcError("this NVRTC cannot produce cubins (CUDA >= 11.1 needed)")
            _nvrtc_check(lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
            if size.value == 0:
                raise NvrtcError("NVRTC produced no cubin for %s: the target must be a real architecture "
                                 "(sm_XY), not a virtual one (compute_XY)" % _arch_in(opts))
            buf = ctypes.create_string_buffer(size.value)
            _nvrtc_check(lib.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN")
        else:
            _nvrtc_check(lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "nvrtcGetPTXSize")
            buf = ctypes.create_string_buffer(size.value)
            _nvrtc_check(lib.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
        return buf.raw[:size.value], lowered_name
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _program_log(lib, prog):
    size = ctypes.c_size_t()
    if lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)) != 0 or size.value <= 1:
        return ""
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, buf)
    return buf.value.decode("utf-8", "replace")


def compile_to_ptx(source, name, options=(), arch="compute_90"):
    """PTX text for the kernel `name` (no GPU needed). Returns (ptx, lowered_name)."""
    image, lowered = _nvrtc_compile(source, name, options, arch, "ptx")
    return image.rstrip(b"\0").decode(), lowered


def compile_to_cubin(source, name, options=(), arch="sm_90"):
    """A cubin (ELF) for the kernel `name` (no GPU needed). Returns (cubin, lowered_name)."""
    return _nvrtc_compile(source, name, options, arch, "cubin")


def cache_key(source, name, options, arch):
    """sha256 over source, options, arch (and the kernel's name and NVRTC's version)."""
    h = hashlib.sha256()
    for part in [source, name] + list(options) + [arch, "%d.%d" % nvrtc_version()]:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


# --- the driver -------------------------------------------------------------------------

_cuda = None


def _load_driver():
    global _cuda
    if _cuda is not None:
        return _cuda
    tried = []
    for path in ("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
                 "/usr/lib64/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"):
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError:
            tried.append(path)
    else:
        raise LibraryNotFound("libcuda.so.1 (the NVIDIA driver's CUDA library) was not found (tried %s): kernels "
                              "can be compiled (compile_to_ptx, compile_to_cubin) but not loaded or launched "
                              "on this machine" % ", ".join(tried))
    P, I, U = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
    sigs = {
        "cuInit": [U],
        "cuDeviceGet": [ctypes.POINTER(I), I],
        "cuCtxGetCurrent": [ctypes.POINTER(P)],
        "cuCtxSetCurrent": [P],
        "cuDevicePrimaryCtxRetain": [ctypes.POINTER(P), I],
        "cuModuleLoadData": [ctypes.POINTER(P), P],
        "cuModuleUnload": [P],
        "cuModuleGetFunction": [ctypes.POINTER(P), P, ctypes.c_char_p],
        "cuFuncSetAttribute": [P, I, I],
        "cuLaunchKernel": [P, U, U, U, U, U, U, U, P, P, P],
        "cuGetErrorName": [I, ctypes.POINTER(ctypes.c_char_p)],
        "cuGetErrorString": [I, ctypes.POINTER(ctypes.c_char_p)],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, I
    _check(lib.cuInit(0), "cuInit", lib)
    _cuda = lib
    return lib


def _check(result, what, lib=None):
    if result == 0:
        return
    lib = lib or _cuda
    name, desc = ctypes.c_char_p(), ctypes.c_char_p()
    lib.cuGetErrorName(result, ctypes.byref(name))
    lib.cuGetErrorString(result, ctypes.byref(desc))
    raise CudaError(result, name.value.decode() if name.value else "CUDA_ERROR_%d" % result, what,
                    desc.value.decode() if desc.value else "")


def _current_context(device_index):
    """Makes torch's primary context for the device current on this thread."""
    import torch
    lib = _load_driver()
    torch.cuda.current_stream(device_index)  # initialises torch's CUDA state for the device
    with torch.cuda.device(device_index):
        torch.cuda.synchronize()
    ctx = ctypes.c_void_p()
    _check(lib.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    if not ctx.value:
        dev = ctypes.c_int()
        _check(lib.cuDeviceGet(ctypes.byref(dev), device_index), "cuDeviceGet")
        _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        _check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx.value


# --- compile + launch -----------------------------------------------------------------

_images = {}    # key -> (image, lowered name, kind)
_kernels = {}   # (key, device index) -> Kernel
_MAX_DYNAMIC_SHARED = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
_DEFAULT_SHARED_LIMIT = 48 << 10


class Kernel(object):
    """A loaded kernel: call it with (grid, block, *args, shared_mem=0, stream=None)."""

    def __init__(self, name, function, module, device_index, key):
        self.name = name
        self.key = key
        self.device_index = device_index
        self._function = function
        self._module = module
        self._shared_limit = _DEFAULT_SHARED_LIMIT
        self._blocks = {}  # argument types -> _Block

    def __call__(self, grid, block, *args, **kwargs):
        shared_mem = int(kwargs.pop("shared_mem", 0)) if kwargs else 0
        stream = kwargs.pop("stream", None) if kwargs else None
        if kwargs:
            raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
        g, b = _fast_dims(grid, "grid"), _fast_dims(block, "block")
        block_ = _block_for(self._blocks, args)
        lib = _load_driver()
        if shared_mem > self._shared_limit:
            # Over 48 KiB of dynamic shared memory must be opted into per function.
            _check(lib.cuFuncSetAttribute(self._function, _MAX_DYNAMIC_SHARED, shared_mem),
                   "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES=%d) for %s" % (shared_mem, self.name))
            self._shared_limit = shared_mem
        params = block_.fill(args)
        result = lib.cuLaunchKernel(self._function, g[0], g[1], g[2], b[0], b[1], b[2], shared_mem,
                                    _stream_handle(stream, self.device_index), ctypes.addressof(params), None)
        if result != 0:
            _check(result, "cuLaunchKernel(%s, grid=%s, block=%s, shared_mem=%d)" % (self.name, g, b, shared_mem))

    def __repr__(self):
        return "<nvrtc_runtime.Kernel %s on cuda:%d>" % (self.name, self.device_index)


def _stream_handle(stream, device_index):
    """The CUstream to launch on: torch's current stream of the device when stream is None."""
    if stream is None:
        import torch
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # one C call where torch has it
        return raw(device_index) if raw is not None else torch.cuda.current_stream(device_index).cuda_stream
    if isinstance(stream, int):
        return stream
    return stream.cuda_stream


def device_arch(device_index=None):
    """("sm_90", "cubin") for the device, or a compute_XY PTX target when this
    NVRTC does not know the device's architecture (the driver then JITs it)."""
    import torch
    if device_index is None:
        device_index = torch.cuda.current_device()
    major, minor = torch.cuda.get_device_capability(device_index)
    cc = major * 10 + minor
    archs = supported_archs()
    if not archs or cc in archs:
        return "sm_%d" % cc, "cubin"
    older = [a for a in archs if a <= cc]
    if not older:
        raise NvrtcError("NVRTC %d.%d supports sm_%s..sm_%s, not this device's sm_%d"
                         % (nvrtc_version() + (min(archs), max(archs), cc)))
    return "compute_%d" % max(older), "ptx"


def _cache_dir():
    d = os.environ.get("HIERA_CACHE_DIR")
    return os.path.join(d, "cubin") if d else None


def _compile_image(source, name, options, arch, kind):
    key = cache_key(source, name, options, arch)
    if key in _images:
        return key, _images[key]
    cdir = _cache_dir()
    image_path = os.path.join(cdir, key + "." + kind) if cdir else None
    if image_path and os.path.isfile(image_path) and os.path.isfile(image_path + ".name"):
        with open(image_path, "rb") as f:
            image = f.read()
        with open(image_path + ".name") as f:
            lowered = f.read().strip()
    else:
        image, lowered = _nvrtc_compile(source, name, options, arch, kind)
        if kind == "ptx" and not image.endswith(b"\0"):
            image += b"\0"
        if image_path:
            try:
                os.makedirs(cdir, exist_ok=True)
                tmp = "%s.%d.tmp" % (image_path, os.getpid())
                with open(tmp, "wb") as f:
                    f.write(image)
                with open(image_path + ".name", "w") as f:
                    f.write(lowered)
                os.replace(tmp, image_path)
            except OSError:
                pass  # the disk cache is an optimisation
    _images[key] = (image, lowered, kind)
    return key, _images[key]


def compile(source, name, options=()):
    """Compiles `name` in `source` for the current CUDA device and loads it.
    Cached by sha256(source, name, options, arch, NVRTC version), in memory
    and, when HIERA_CACHE_DIR is set, as <dir>/cubin/<key>.cubin."""
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("nvrtc_runtime.compile needs a CUDA device, and torch sees none "
                           "(compile_to_ptx/compile_to_cubin work without one)")
    options = tuple(options)
    device_index = torch.cuda.current_device()
    explicit = _arch_in(options)
    if explicit:
        arch, kind = explicit, ("cubin" if explicit.startswith("sm_") else "ptx")
    else:
        arch, kind = device_arch(device_index)
    key, (image, lowered, kind) = _compile_image(source, name, options, arch, kind)
    cached = _kernels.get((key, device_index))
    if cached is not None:
        return cached
    lib = _load_driver()
    _current_context(device_index)
    module = ctypes.c_void_p()
    buf = ctypes.create_string_buffer(image, len(image))
    _check(lib.cuModuleLoadData(ctypes.byref(module), ctypes.cast(buf, ctypes.c_void_p)),
           "cuModuleLoadData(%s for %s)" % (kind, arch))
    function = ctypes.c_void_p()
    _check(lib.cuModuleGetFunction(ctypes.byref(function), module, lowered.encode()),
           "cuModuleGetFunction(%s)" % lowered)
    kernel = Kernel(name, function, module, device_index, key)
    _kernels[(key, device_index)] = kernel
    return kernel


def clear_cache():
    """Forgets compiled images and loaded kernels (modules stay loaded until exit)."""
    _images.clear()
    _kernels.clear()
