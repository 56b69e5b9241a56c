"""The delivered form of a PyTorch candidate, and the `deliver` job.

In the inner loop a candidate brings its own CUDA kernels through
`hiera_runner.nvrtc_runtime` (NVRTC, about 0.13 s a kernel, instead of
load_inline's nvcc + torch headers, about 50 s cold). A result leaves the
optimizer standalone: it needs torch and nothing of hiera. to_delivered()
rewrites the candidate so (the rewrite needs the standard library only):

- every `from hiera_runner import nvrtc_runtime as rt` (or `import
  hiera_runner.nvrtc_runtime as rt`, or `from hiera_runner.nvrtc_runtime
  import compile, int64, ...`) binds the same names to a generated,
  rt-compatible object (`_nvrtc_runtime`), defined once above the first such
  import; nothing else of the text changes, so ModelNew keeps its class,
  constructor arguments, parameter and buffer names, and its forward;
- each kernel source passed to rt.compile is found with `ast` (a string
  literal, a module-level string constant, or a `+` of those; the kernel name
  and the options likewise) and is compiled once, on first use. Where the
  installed torch compiles with NVRTC itself (torch.cuda._utils._nvrtc_compile,
  torch >= 2.8) it is used with the same options the kernel was optimized with
  (well under a second), and the kernel is launched through the driver torch
  loaded, on torch's current stream, each argument in the C type below.
  Elsewhere torch.utils.cpp_extension.load_inline builds it together with a
  generated C++ launcher per kernel. The launcher sits in the same
  translation unit after the kernel source, so it needs no declaration of the
  kernel, extern "C" or not: it names it by the name rt.compile was given (a C++
  name expression, which is what NVRTC took too: `scale`, `ns::scale`,
  `fill<double>`), deduces the kernel's parameter types from `&kernel`, and
  launches it with <<<grid, block, shared_mem, stream>>> on torch's current
  CUDA stream (at::cuda::getCurrentCUDAStream) followed by
  C10_CUDA_KERNEL_LAUNCH_CHECK(). Arguments keep nvrtc_runtime's convention
  byte for byte: a tensor passes its data_ptr, a Python int an int32, a float
  a float32, bool a bool, None a null pointer, a ctypes scalar its bytes, and
  rt.int64(v), rt.float64(v), rt.uint32, rt.uint64, rt.int32, rt.float32 and
  rt.pointer the C type they name (each argument is an 8-byte slot, zero
  past its value, that the kernel's parameter is read from).

A candidate that does not use nvrtc_runtime is delivered unchanged. One whose
kernels cannot be resolved before it runs (a source built at run time, an
f-string, a name chosen in a loop), that uses the runtime other than through
rt.compile(...) calls and the argument types, or that imports anything else
of hiera, is refused with a DeliverError saying why.
"""

import ast
import hashlib
import re

from .jsonrpc import INVALID_PARAMS, RpcError

SHIM = "_nvrtc_runtime"  # the name of the rt-compatible object in a delivered module
RUNTIME_MODULE = "hiera_runner.nvrtc_runtime"
# nvrtc_runtime's names that have a delivered form.
SCALAR_TYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64", "pointer")
SUPPORTED = ("compile",) + SCALAR_TYPES


class DeliverError(Exception):
    """The candidate cannot be delivered; the message says why."""

    def __init__(self, message, line=None):
        Exception.__init__(self, message if line is None else "line %d: %s" % (line, message))
        self.message = str(self)
        self.line = line


class KernelUse(object):
    """One kernel the candidate compiles: its source, name and options, resolved."""

    def __init__(self, source, name, options, line):
        self.source = source
        self.name = name
        self.options = tuple(options)
        self.line = line

    @property
    def key(self):
        return (self.source, self.name, self.options)


class Delivery(object):
    """What to_delivered() made: the text and the kernels in it."""

    def __init__(self, source, kernels):
        self.source = source
        self.kernels = kernels  # [KernelUse], in order of first appearance, without repeats

    @property
    def needs_gpu(self):
        return bool(self.kernels)


# --- finding the runtime in the candidate ---------------------------------------------


def _is_hiera(module):
    top = (module or "").split(".")[0]
    return top == "hiera" or top.startswith("hiera_")


def hiera_imports(source):
    """Every import of a hiera module in source (statements, __import__ and
    importlib.import_module with a literal name), as "line N: ..." strings."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _is_hiera(a.name):
                    found.append("line %d: import %s" % (node.lineno, a.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_hiera(node.module):
            found.append("line %d: from %s import ..." % (node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            first = node.args[0]
            if name in ("__import__", "import_module") and isinstance(first, ast.Constant) and \
                    isinstance(first.value, str) and _is_hiera(first.value):
                found.append("line %d: %s(%r)" % (node.lineno, name, first.value))
    return found


class _Imports(object):
    """The candidate's imports of nvrtc_runtime: the names they bind and the
    statement each replacement goes to."""

    def __init__(self):
        self.module_names = set()   # names bound to the runtime module (rt)
        self.member_names = {}      # local name -> runtime attribute (from ... import compile as c)
        self.statements = []        # (import node, replacement text)


def _find_imports(tree):
    imports = _Imports()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if not any(_is_hiera(a.name) for a in node.names):
                continue
            bound = []
            for a in node.names:
                if not _is_hiera(a.name):
                    raise DeliverError("`import %s` shares a statement with an import of %s; put the nvrtc_runtime "
                                       "import on its own" % (a.name, RUNTIME_MODULE), node.lineno)
                if a.name != RUNTIME_MODULE:
                    raise DeliverError("imports %s, which exists only inside the optimizer's runner (only %s "
                                       "has a delivered form)" % (a.name, RUNTIME_MODULE), node.lineno)
                if not a.asname:
                    raise DeliverError("`import %s` without `as`: write `from hiera_runner import nvrtc_runtime "
                                       "as rt`" % RUNTIME_MODULE, node.lineno)
                imports.module_names.add(a.asname)
                bound.append((a.asname, SHIM))
            imports.statements.append((node, _binding(bound)))
        elif isinstance(node, ast.ImportFrom):
            if node.level != 0 or not _is_hiera(node.module):
                continue
            bound = []
            for a in node.names:
                local = a.asname or a.name
                if node.module == "hiera_runner" and a.name == "nvrtc_runtime":
                    imports.module_names.add(local)
                    bound.append((local, SHIM))
                elif node.module == RUNTIME_MODULE and a.name in SUPPORTED:
                    imports.member_names[local] = a.name
                    bound.append((local, SHIM + "." + a.name))
                elif node.module == RUNTIME_MODULE:
                    raise DeliverError("imports %s.%s, which has no delivered form (only %s)"
                                       % (RUNTIME_MODULE, a.name, ", ".join(SUPPORTED)), node.lineno)
                else:
                    raise DeliverError("imports %s.%s, which exists only inside the optimizer's runner (only %s "
                                       "has a delivered form)" % (node.module, a.name, RUNTIME_MODULE), node.lineno)
            imports.statements.append((node, _binding(bound)))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in ("__import__", "import_module"):
                first = node.args[0] if node.args else None
                if not (isinstance(first, ast.Constant) and isinstance(first.value, str)) or _is_hiera(first.value):
                    raise DeliverError("imports a module at run time (%s); only a plain `from hiera_runner import "
                                       "nvrtc_runtime as rt` can be delivered" % name, node.lineno)
    return imports


def _binding(pairs):
    """[("rt", "_nvrtc_runtime")] -> "rt = _nvrtc_runtime"; several -> a tuple assignment."""
    names = ", ".join(p[0] for p in pairs)
    values = ", ".join(p[1] for p in pairs)
    return "%s = %s" % (names, values)


# --- resolving rt.compile's arguments -------------------------------------------------------


class _Constants(object):
    """Module-level names bound exactly once, by a plain assignment."""

    def __init__(self, tree):
        self.values = {}
        counts = {}

        def bind(name, value=None):
            counts[name] = counts.get(name, 0) + 1
            self.values[name] = value

        def visit(node):
            # Bindings in the module's own scope: not inside functions, classes or lambdas.
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bind(node.name)
                return
            if isinstance(node, ast.Lambda):
                return
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                bind(node.targets[0].id, node.value)
                visit(node.value)
                return
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                bind(node.target.id, node.value)
                visit(node.value)
                return
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bind(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    bind((a.asname or a.name).split(".")[0])
            for child in ast.iter_child_nodes(node):
                visit(child)

        for statement in tree.body:
            visit(statement)
        # `global NAME` in a function rebinds NAME at run time.
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                for name in node.names:
                    counts[name] = counts.get(name, 0) + 1
        self.ambiguous = {n for n, c in counts.items() if c > 1}

    def lookup(self, name):
        """(value node or None, why not)."""
        if name not in self.values:
            return None, "`%s`, which is not a module-level name" % name
        if name in self.ambiguous:
            return None, "`%s`, which the module binds more than once" % name
        value = self.values[name]
        if value is None:
            return None, "`%s`, which is not a plain module-level assignment" % name
        return value, None


def _describe(node):
    if isinstance(node, ast.JoinedStr):
        return "an f-string"
    if isinstance(node, ast.Call):
        return "a call"
    if isinstance(node, ast.Attribute):
        return "an attribute"
    if isinstance(node, ast.Subscript):
        return "a subscript"
    return "an expression (%s)" % type(node).__name__


def _resolve_str(node, constants, depth=0):
    """A str value known before the module runs, or raises _Unresolved."""
    if depth > 50:
        raise _Unresolved("a chain of constants too deep to follow")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        value, why = constants.lookup(node.id)
        if value is None:
            raise _Unresolved(why)
        try:
            return _resolve_str(value, constants, depth + 1)
        except _Unresolved as e:
            raise _Unresolved("`%s`, bound to %s" % (node.id, e.what))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _resolve_str(node.left, constants, depth + 1) + _resolve_str(node.right, constants, depth + 1)
    raise _Unresolved(_describe(node))


def _resolve_options(node, constants, depth=0):
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return ()
    if isinstance(node, (ast.List, ast.Tuple)):
        return tuple(_resolve_str(e, constants) for e in node.elts)
    if isinstance(node, ast.Name) and depth < 50:
        value, why = constants.lookup(node.id)
        if value is None:
            raise _Unresolved(why)
        return _resolve_options(value, constants, depth + 1)
    raise _Unresolved(_describe(node))


class _Unresolved(Exception):
    def __init__(self, what):
        Exception.__init__(self, what)
        self.what = what


# A C++ name expression for a kernel: name, ns::name, name<args>.
_KERNEL_NAME = re.compile(r"^\s*(::\s*)?[A-Za-z_]\w*(\s*::\s*[A-Za-z_]\w*)*\s*(<[^;{}\"'\\\n]*>)?\s*$")


def _base_name(name):
    head = name.split("<", 1)[0]
    return head.split("::")[-1].strip()


def _parents(tree):
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _find_kernels(tree, imports):
    """Every rt.compile(...) call, resolved; refuses other uses of the runtime."""
    constants = _Constants(tree)
    parents = _parents(tree)
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in imports.module_names:
            if not isinstance(node.ctx, ast.Load):
                raise DeliverError("rebinds `%s`, the nvrtc_runtime module" % node.id, node.lineno)
            parent = parents.get(node)
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                raise DeliverError("uses `%s` (nvrtc_runtime) as a value; only %s.compile(...) calls and the "
                                   "argument types %s can be delivered"
                                   % (node.id, node.id, ", ".join("%s.%s" % (node.id, t) for t in SCALAR_TYPES)),
                                   node.lineno)
            if parent.attr not in SUPPORTED:
                raise DeliverError("uses %s.%s, which has no delivered form (only %s)"
                                   % (node.id, parent.attr, ", ".join(SUPPORTED)), node.lineno)
            if parent.attr == "compile":
                call = parents.get(parent)
                if not (isinstance(call, ast.Call) and call.func is parent):
                    raise DeliverError("uses %s.compile other than by calling it directly" % node.id, node.lineno)
                calls.append(call)
        elif isinstance(node, ast.Name) and node.id in imports.member_names:
            if not isinstance(node.ctx, ast.Load):
                raise DeliverError("rebinds `%s`, imported from nvrtc_runtime" % node.id, node.lineno)
            if imports.member_names[node.id] == "compile":
                call = parents.get(node)
                if not (isinstance(call, ast.Call) and call.func is node):
                    raise DeliverError("uses `%s` (nvrtc_runtime.compile) other than by calling it directly"
                                       % node.id, node.lineno)
                calls.append(call)
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    kernels, seen = [], set()
    for call in calls:
        use = _resolve_call(call, constants)
        if use.key not in seen:
            seen.add(use.key)
            kernels.append(use)
    return kernels


def _resolve_call(call, constants):
    line = call.lineno
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise DeliverError("rt.compile is called with *args or **kwargs; its source and kernel name must be "
                           "visible in the call", line)
    given = dict(zip(("source", "name", "options"), call.args))
    if len(call.args) > 3:
        raise DeliverError("rt.compile takes (source, name, options=()), not %d arguments" % len(call.args), line)
    for k in call.keywords:
        if k.arg not in ("source", "name", "options") or k.arg in given:
            raise DeliverError("rt.compile has no argument %r here (it takes source, name, options)" % k.arg, line)
        given[k.arg] = k.value
    for required in ("source", "name"):
        if required not in given:
            raise DeliverError("rt.compile is called without its %s" % required, line)
    what = {"source": "kernel source", "name": "kernel name"}
    values = {}
    for part in ("source", "name"):
        try:
            values[part] = _resolve_str(given[part], constants)
        except _Unresolved as e:
            raise DeliverError("the %s passed to rt.compile is %s, not a string literal or a module-level string "
                               "constant: it is known only when the module runs, so the kernel cannot be built "
                               "ahead and the candidate cannot be delivered" % (what[part], e.what), line)
    try:
        options = _resolve_options(given.get("options"), constants)
    except _Unresolved as e:
        raise DeliverError("the options passed to rt.compile are %s, not a literal list of strings or a module-level "
                           "constant one; the candidate cannot be delivered" % e.what, line)
    name = values["name"]
    if not _KERNEL_NAME.match(name):
        raise DeliverError("kernel name %r is not a C++ name, qualified name or template instantiation "
                           "(such as scale, ns::scale, fill<float>) that a launcher can call" % name, line)
    base = _base_name(name)
    if not re.search(r"\b%s\b" % re.escape(base), values["source"]):
        raise DeliverError("kernel %r is not defined in the source passed to rt.compile" % name, line)
    cuda_flags(options, line)  # refuses options without an nvcc equivalent
    return KernelUse(values["source"], name.strip(), options, line)


# --- NVRTC options -> nvcc flags ------------------------------------------------------------

_ARCH = re.compile(r"^(-arch|--gpu-architecture)(=(?P<value>.+))?$")
_ARCH_VALUE = re.compile(r"^(sm|compute)_(\d+[a-z]?)$")
# NVRTC options that nvcc understands alike (prefixes; "=value" forms included).
_PASSED = ("-D", "-U", "-I", "--define-macro", "--undefine-macro", "--include-path", "-std=", "--std=",
           "-use_fast_math", "--use_fast_math", "-ftz", "--ftz", "-prec-div", "--prec-div", "-prec-sqrt",
           "--prec-sqrt", "-fmad", "--fmad", "-lineinfo", "--generate-line-info", "-maxrregcount",
           "--maxrregcount", "-restrict", "--restrict", "-extra-device-vectorization", "--extra-device-vectorization",
           "-O", "-w", "--disable-warnings", "-G", "--device-debug", "-Xptxas", "--ptxas-options",
           "--diag-suppress", "-diag-suppress", "--display-error-number", "-err-no")


def cuda_flags(options, line=None):
    """rt.compile options -> extra nvcc flags for load_inline; raises
    DeliverError for an option nvcc would not take alike."""
    options = list(options)
    flags = []
    i = 0
    while i < len(options):
        opt = options[i]
        m = _ARCH.match(opt)
        if m:
            value = m.group("value")
            if value is None:
                if i + 1 >= len(options):
                    raise DeliverError("option %s has no value" % opt, line)
                i += 1
                value = options[i]
            a = _ARCH_VALUE.match(value)
            if not a:
                raise DeliverError("architecture %r is not sm_XY or compute_XY" % value, line)
            num = a.group(2)
            code = "sm_" + num if a.group(1) == "sm" else "compute_" + num
            flags.append("-gencode=arch=compute_%s,code=%s" % (num, code))
        elif opt in ("-I", "-D", "-U", "-Xptxas") and i + 1 < len(options):
            flags += [opt, options[i + 1]]
            i += 1
        elif any(opt == p or opt.startswith(p) for p in _PASSED):
            flags.append(opt)
        else:
            raise DeliverError("NVRTC option %r has no nvcc equivalent known to the delivered form" % opt, line)
        i += 1
    return flags


# --- the generated code ------------------------------------------------------------------------

# Compiled before each kernel source: the headers and the launch helper (which
# does not depend on the kernel), then `#line` so that nvcc's messages give the
# kernel source's own line numbers, as NVRTC's did.
CUDA_PRELUDE = r"""#include <cstring>
#include <utility>
#include <vector>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

namespace nvrtc_launch {
// A kernel argument as nvrtc_runtime passes it: its C value at the start of an
// 8-byte slot, the rest zero; the kernel's parameter is read from those bytes.
union Slot { uint64_t u64; int64_t i64; uint32_t u32; int32_t i32; double f64; float f32; bool b; void* p; };
enum Kind : int64_t { TENSOR, NULL_POINTER, POINTER, INT32, INT64, UINT32, UINT64, FLOAT32, FLOAT64, BOOL };

template <typename T>
T read(const Slot& slot) {
  static_assert(sizeof(T) <= sizeof(Slot), "a kernel parameter over 8 bytes cannot be passed from Python");
  T value;
  std::memcpy(&value, &slot, sizeof(T));
  return value;
}

template <typename... P, size_t... I>
void launch_slots(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_mem, cudaStream_t stream,
                  const Slot* slots, std::index_sequence<I...>) {
  (void)slots;
  kernel<<<grid, block, shared_mem, stream>>>(read<P>(slots[I])...);
}

// Packs the arguments, then launches on torch's current stream of the device
// (or the stream given), the kernel's parameter types deduced from its address.
template <typename... P>
int64_t launch(void (*kernel)(P...), const char* name, int64_t device, const std::vector<int64_t>& dims,
            int64_t shared_mem, int64_t stream, const std::vector<int64_t>& kinds,
            const std::vector<at::Tensor>& tensors, const std::vector<int64_t>& ints,
            const std::vector<double>& floats) {
  // A wrong count is answered, not thrown: the shim raises it in Python.
  if (kinds.size() != sizeof...(P)) return static_cast<int64_t>(sizeof...(P));
  TORCH_CHECK(dims.size() == 6, "grid and block need 3 dimensions each");
  std::vector<Slot> slots(kinds.size() + 1);
  std::memset(slots.data(), 0, slots.size() * sizeof(Slot));
  size_t t = 0, i = 0, f = 0;
  for (size_t k = 0; k < kinds.size(); ++k) {
    Slot& s = slots[k];
    switch (kinds[k]) {
      case TENSOR: {
        const at::Tensor& x = tensors.at(t++);
        TORCH_CHECK(x.is_cuda(), "argument ", k, " of ", name, " is a tensor on ", x.device(),
                    "; kernels take CUDA tensors");
        s.p = x.data_ptr();
        break;
      }
      case NULL_POINTER: s.p = nullptr; break;
      case POINTER: case UINT64: s.u64 = static_cast<uint64_t>(ints.at(i++)); break;
      case INT32: s.i32 = static_cast<int32_t>(ints.at(i++)); break;
      case INT64: s.i64 = ints.at(i++); break;
      case UINT32: s.u32 = static_cast<uint32_t>(ints.at(i++)); break;
      case FLOAT32: s.f32 = static_cast<float>(floats.at(f++)); break;
      case FLOAT64: s.f64 = floats.at(f++); break;
      case BOOL: s.b = ints.at(i++) != 0; break;
      default: TORCH_CHECK(false, "argument ", k, " of ", name, " has an unknown kind ", kinds[k]);
    }
  }
  const auto index = static_cast<c10::DeviceIndex>(device);
  const c10::cuda::CUDAGuard guard(index);
  const cudaStream_t launch_stream = stream == -1 ? at::cuda::getCurrentCUDAStream(index).stream()
                                                  : reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(stream));
  if (shared_mem > 48 * 1024) {
    // Over 48 KiB of dynamic shared memory must be opted into per function.
    C10_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_mem)));
  }
  launch_slots(kernel, dim3(dims[0], dims[1], dims[2]), dim3(dims[3], dims[4], dims[5]),
               static_cast<size_t>(shared_mem), launch_stream, slots.data(), std::index_sequence_for<P...>{});
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return -1;
}
}  // namespace nvrtc_launch
""" + '#line 1 "kernel.cu"'  # the next line, the kernel source's first, is its line 1

# The rt-compatible object. Plain Python over torch; load_inline is imported
# when a kernel is first compiled, so the module imports on any machine.
SHIM_CODE = r'''# --- nvrtc_runtime, standalone ----------------------------------------------------
# This module's CUDA kernels were compiled with NVRTC while it was optimized; here
# each kernel source is built once, on first use: with torch's own NVRTC where the
# installed torch has it (torch.cuda._utils, torch >= 2.8: well under a second), else
# by torch.utils.cpp_extension's load_inline with a generated C++ launcher per kernel
# (nvcc, about a minute cold). The calls are unchanged:
# k = rt.compile(source, name, options); k(grid, block, *args, shared_mem=0, stream=None)
# launches on torch's current CUDA stream; a tensor passes its data pointer, an int an
# int32, a float a float32, and rt.int64(v), rt.float64(v), ... the C type they name.
import ctypes as _nvrtc_ctypes
import hashlib as _nvrtc_hashlib
import struct as _nvrtc_struct

import torch as _nvrtc_torch


class _NvrtcRuntime(object):
    TENSOR, NULL_POINTER, POINTER, INT32, INT64, UINT32, UINT64, FLOAT32, FLOAT64, BOOL = range(10)
    # nvcc defines these for torch extensions, NVRTC does not: fp16/bf16 kernels compile as they did.
    NVCC_FLAGS = ("-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                  "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__")
    LAUNCHER = ("int64_t %s(int64_t device, std::vector<int64_t> dims, int64_t shared_mem, int64_t stream, "
                "std::vector<int64_t> kinds, std::vector<at::Tensor> tensors, std::vector<int64_t> ints, "
                "std::vector<double> floats)")
    LAUNCH = (" {\n  return nvrtc_launch::launch(&%s, \"%s\", device, dims, shared_mem, stream, kinds, tensors, ints, "
              "floats);\n}\n")
    PRELUDE = @PRELUDE@

    class _Scalar(object):
        kind = lo = hi = None

        def __init__(self, value):
            if self.lo is not None and not (self.lo <= int(value) <= self.hi):
                raise OverflowError("%d does not fit in %s" % (value, type(self).__name__))
            self.value = value

        def __repr__(self):
            return "%s(%r)" % (type(self).__name__, self.value)

    class int32(_Scalar):
        kind, lo, hi = 3, -(1 << 31), (1 << 31) - 1

    class int64(_Scalar):
        kind, lo, hi = 4, -(1 << 63), (1 << 63) - 1

    class uint32(_Scalar):
        kind, lo, hi = 5, 0, (1 << 32) - 1

    class uint64(_Scalar):
        kind, lo, hi = 6, 0, (1 << 64) - 1

    class float32(_Scalar):
        kind = 7

    class float64(_Scalar):
        kind = 8

    class pointer(_Scalar):
        kind = 2

    class Kernel(object):
        def __init__(self, name, launch, device_index):
            self.name = name
            self.device_index = device_index
            self._launch = launch

        def __call__(self, grid, block, *args, **kwargs):
            shared_mem = int(kwargs.pop("shared_mem", 0))
            stream = kwargs.pop("stream", None)
            if kwargs:
                raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
            dims = self.dims(grid, "grid") + self.dims(block, "block")
            kinds, tensors, ints, floats = self.pack(args)
            handle = -1 if stream is None else stream if isinstance(stream, int) else stream.cuda_stream
            arity = self._launch(self.device_index, dims, shared_mem, handle, kinds, tensors, ints, floats)
            if arity >= 0:
                raise RuntimeError("kernel %s takes %d arguments, not %d" % (self.name, arity, len(args)))

        def __repr__(self):
            return "<delivered kernel %s on cuda:%d>" % (self.name, self.device_index)

        @staticmethod
        def dims(value, what):
            if isinstance(value, int):
                value = (value,)
            value = tuple(int(v) for v in value)
            if not 1 <= len(value) <= 3 or any(v < 1 for v in value):
                raise ValueError("%s must be a positive int or a tuple of 1 to 3 positive ints, not %r"
                                 % (what, value))
            return list(value + (1,) * (3 - len(value)))

        @staticmethod
        def pack(args):
            # As nvrtc_runtime passes them: a kind per argument, the values by type.
            rt = _NvrtcRuntime
            kinds, tensors, ints, floats = [], [], [], []
            for index, arg in enumerate(args):
                if isinstance(arg, rt._Scalar):
                    kind, value = arg.kind, arg.value
                    if kind == rt.POINTER and value is None:
                        value = 0
                elif isinstance(arg, _nvrtc_ctypes._SimpleCData):
                    raw = bytes(arg)
                    if len(raw) > 8:
                        raise TypeError("argument %d: a %s is over 8 bytes" % (index, type(arg).__name__))
                    kind, value = rt.UINT64, int.from_bytes(raw.ljust(8, b"\0"), "little")
                elif arg is None:
                    kinds.append(rt.NULL_POINTER)
                    continue
                elif isinstance(arg, bool):
                    kind, value = rt.BOOL, int(arg)
                elif isinstance(arg, int):
                    if not (-(1 << 31) <= arg < (1 << 31)):
                        raise OverflowError("argument %d: %d does not fit in int32 (plain ints are passed as "
                                            "int32); wrap it: rt.int64(v)" % (index, arg))
                    kind, value = rt.INT32, arg
                elif isinstance(arg, float):
                    kind, value = rt.FLOAT32, arg
                elif isinstance(arg, _nvrtc_torch.Tensor):
                    if not arg.is_cuda:
                        raise TypeError("argument %d is a tensor on %s; kernels take CUDA tensors (move it with "
                                        ".cuda())" % (index, arg.device))
                    kinds.append(rt.TENSOR)
                    tensors.append(arg)
                    continue
                else:
                    iface = getattr(arg, "__cuda_array_interface__", None)
                    if not (isinstance(iface, dict) and "data" in iface):
                        raise TypeError("argument %d: cannot pass a %s to a kernel (tensors, int, float, bool, None, "
                                        "or rt.int64/float64/... wrappers)" % (index, type(arg).__name__))
                    kind, value = rt.POINTER, iface["data"][0]
                kinds.append(kind)
                if kind in (rt.FLOAT32, rt.FLOAT64):
                    floats.append(float(value))
                else:
                    value = int(value)
                    ints.append(value - (1 << 64) if value >= (1 << 63) else value)
            return kinds, tensors, ints, floats

    class TorchNvrtcKernel(object):
        # A kernel compiled by torch's NVRTC, launched through the driver torch loaded,
        # each argument in the C type nvrtc_runtime gives it.
        # A launch's parameters in one buffer: the void*[], then an 8-byte slot per argument,
        # written by one struct.pack_into (a ctypes object per argument cost 30 to 50 microseconds
        # of CPU a launch). The layout is made once per argument types; the buffer is the launch's
        # own, since the driver reads it with the GIL released.
        SLOTS = {0: "Q", 1: "Q", 2: "Q", 3: "i4x", 4: "q", 5: "I4x", 6: "Q", 7: "f4x", 8: "d", 9: "?7x"}
        AS_IS, TENSOR, SCALAR, NULL, RAW = range(5)

        def __init__(self, name, function, device_index):
            self.name = name
            self.device_index = device_index
            self._function = function
            self._shared_limit = 48 * 1024
            self._layouts = {}

        def _layout(self, args):
            rt = _NvrtcRuntime
            kinds = rt.Kernel.pack(args)[0]  # refuses what cannot be passed, with the argument's index
            arity = self.arity(self.driver())
            if arity is not None and arity != len(args):
                raise RuntimeError("kernel %s takes %d arguments, not %d" % (self.name, arity, len(args)))
            readers = []
            for arg, kind in zip(args, kinds):
                if kind == rt.TENSOR:
                    readers.append(self.TENSOR)
                elif kind == rt.NULL_POINTER:
                    readers.append(self.NULL)
                elif isinstance(arg, rt._Scalar):
                    readers.append(self.SCALAR)
                elif isinstance(arg, (bool, int, float)):
                    readers.append(self.AS_IS)
                else:  # ctypes values, __cuda_array_interface__: as pack reads them
                    readers.append(self.RAW)
            n = len(kinds)
            fmt = "<" + "Q" * n + "".join(self.SLOTS[k] for k in kinds)
            return tuple(readers), fmt, max(1, 2 * n), tuple(8 * (n + i) for i in range(n))

        def __call__(self, grid, block, *args, **kwargs):
            rt = _NvrtcRuntime
            shared_mem = int(kwargs.pop("shared_mem", 0)) if kwargs else 0
            stream = kwargs.pop("stream", None) if kwargs else None
            if kwargs:
                raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
            g = (grid, 1, 1) if type(grid) is int and grid > 0 else rt.Kernel.dims(grid, "grid")
            b = (block, 1, 1) if type(block) is int and block > 0 else rt.Kernel.dims(block, "block")
            key = tuple(map(type, args))
            layout = self._layouts.get(key)
            if layout is None:
                layout = self._layouts[key] = self._layout(args)
            readers, fmt, words, offsets = layout
            values = []
            for reader, arg in zip(readers, args):  # 0..4: AS_IS, TENSOR, SCALAR, NULL, RAW
                if reader == 0:
                    values.append(arg)
                elif reader == 1:
                    if not arg.is_cuda:
                        raise TypeError("argument %d is a tensor on %s; kernels take CUDA tensors (move it with "
                                        ".cuda())" % (len(values), arg.device))
                    values.append(arg.data_ptr())
                elif reader == 2:
                    values.append(0 if arg.value is None else arg.value)
                elif reader == 3:
                    values.append(0)
                else:
                    ints = rt.Kernel.pack([arg])[2]
                    values.append(ints[0] % (1 << 64))
            params = (_nvrtc_ctypes.c_uint64 * words)()
            base = _nvrtc_ctypes.addressof(params)
            try:
                _nvrtc_struct.pack_into(fmt, params, 0, *[base + o for o in offsets], *values)
            except _nvrtc_struct.error:
                rt.Kernel.pack(args)  # an int outside its C type: refused with pack's message
                raise
            if shared_mem > self._shared_limit:  # over 48 KiB of dynamic shared memory is opted into
                self._check(self.driver().cuFuncSetAttribute(self._function, 8, shared_mem), "cuFuncSetAttribute")
                self._shared_limit = shared_mem
            handle = (self._raw_stream(self.device_index) if stream is None else
                      stream if isinstance(stream, int) else stream.cuda_stream)
            result = self._DRIVER["launch"](self._function, g[0], g[1], g[2], b[0], b[1], b[2], shared_mem, handle,
                                            base, None)
            if result != 0:
                self._check(result, "cuLaunchKernel(%s, grid=%s, block=%s)" % (self.name, g, b))

        @staticmethod
        def _raw_stream(device_index):
            raw = getattr(_nvrtc_torch._C, "_cuda_getCurrentRawStream", None)  # one C call where torch has it
            return raw(device_index) if raw is not None else _nvrtc_torch.cuda.current_stream(device_index).cuda_stream

        # Looked up once per getter: torch opens the driver library anew on each
        # call and cuLaunchKernel is then resolved again, tens of microseconds a
        # launch that a fast kernel (0.2 ms) no longer hides behind the GPU's work.
        _DRIVER = {}

        @classmethod
        def driver(cls):
            getter = _nvrtc_torch.cuda._utils._get_gpu_runtime_library
            if cls._DRIVER.get("getter") is not getter:
                lib = getter()
                launch = lib.cuLaunchKernel
                if isinstance(launch, _nvrtc_ctypes._CFuncPtr):
                    # A prototype of our own (torch's function object keeps the argtypes torch gave it):
                    # ints convert in C, with no ctypes object made per argument.
                    c = _nvrtc_ctypes
                    prototype = c.CFUNCTYPE(c.c_int, c.c_void_p, c.c_uint, c.c_uint, c.c_uint, c.c_uint, c.c_uint,
                                            c.c_uint, c.c_uint, c.c_void_p, c.c_void_p, c.c_void_p)
                    launch = prototype(c.cast(launch, c.c_void_p).value)
                cls._DRIVER.update(getter=getter, lib=lib, launch=launch)
            return cls._DRIVER["lib"]

        def arity(self, lib):
            # The kernel's parameter count from the driver (cuFuncGetParamInfo, CUDA 12.4+):
            # a wrong count is refused here rather than read as garbage by the kernel.
            if not hasattr(self, "_arity"):
                self._arity = None
                query = getattr(lib, "cuFuncGetParamInfo", None)
                if query is not None:
                    offset, size, count = _nvrtc_ctypes.c_size_t(), _nvrtc_ctypes.c_size_t(), 0
                    while count < 4096 and query(self._function, _nvrtc_ctypes.c_size_t(count),
                                                 _nvrtc_ctypes.byref(offset), _nvrtc_ctypes.byref(size)) == 0:
                        count += 1
                    self._arity = count
            return self._arity

        @staticmethod
        def _check(result, what):
            if result != 0:
                raise RuntimeError("CUDA error %d: %s failed" % (result, what))

        def __repr__(self):
            return "<delivered kernel %s on cuda:%d (torch NVRTC)>" % (self.name, self.device_index)

    @staticmethod
    def torch_nvrtc():
        """True when the installed torch compiles kernels with NVRTC itself."""
        utils = getattr(_nvrtc_torch.cuda, "_utils", None)
        return all(hasattr(utils, f) for f in ("_nvrtc_compile", "_cuda_load_module", "_get_gpu_runtime_library"))

    def __init__(self, extensions):
        # One load_inline build per kernel source and options:
        # (sha256 of the source, options, their nvcc flags, [(kernel name, launcher)]).
        self._extensions = extensions
        self._index = {(sha, name, tuple(options)): (i, launcher)
                       for i, (sha, options, _, kernels) in enumerate(extensions) for name, launcher in kernels}
        self._modules = {}
        self._ready = {}

    def compile(self, source, name, options=()):
        key = (_nvrtc_hashlib.sha256(source.encode()).hexdigest(), name, tuple(options))
        entry = self._index.get(key)
        if entry is None:
            raise RuntimeError("kernel %r (options %r, source sha256 %s) is not one this module was delivered "
                               "with: %s" % (name, tuple(options), key[0], sorted(k[1] for k in self._index)))
        if not _nvrtc_torch.cuda.is_available():
            raise RuntimeError("compiling kernel %r needs a CUDA device, and torch sees none" % name)
        device_index = _nvrtc_torch.cuda.current_device()
        kernel = self._ready.get((key, device_index))
        if kernel is None:
            if self.torch_nvrtc():
                from torch.cuda import _utils
                # torch targets this device's architecture itself: an explicit one would clash.
                kept = [o for o in options if not o.startswith(("-arch", "--gpu-architecture"))]
                # torch adds its extension flags, which turn the half and bfloat16 conversions off; the kernels
                # were optimized without them, so they get them back here, as load_inline's build does.
                kept = list(self.NVCC_FLAGS) + kept
                ptx, mangled = _utils._nvrtc_compile(source, name, None, None, kept or None)
                loaded = _utils._cuda_load_module(ptx, [mangled])[mangled]
                kernel = self.TorchNvrtcKernel(name, loaded.func, device_index)
                kernel._module = loaded  # keeps the module loaded as long as the kernel lives
            else:
                module = self._build(entry[0], source)
                kernel = self.Kernel(name, getattr(module, entry[1]), device_index)
            self._ready[(key, device_index)] = kernel
        return kernel

    def _build(self, index, source):
        if index not in self._modules:
            from torch.utils.cpp_extension import load_inline
            _, _, flags, kernels = self._extensions[index]
            flags = list(self.NVCC_FLAGS) + list(flags)
            if not any("arch" in f for f in flags):  # this GPU's architecture, as NVRTC compiled for
                major, minor = _nvrtc_torch.cuda.get_device_capability()
                flags.append("-gencode=arch=compute_%d%d,code=sm_%d%d" % (major, minor, major, minor))
            cpp = "".join(self.LAUNCHER % launcher + ";\n" for _, launcher in kernels)
            cuda = "#line 1 \"launchers.cu\"\n" + "".join(self.LAUNCHER % launcher + self.LAUNCH % (name, name)
                                                          for name, launcher in kernels)
            digest = _nvrtc_hashlib.sha256("\0".join([self.PRELUDE, source, cpp, cuda] + flags).encode())
            self._modules[index] = load_inline(
                name="nvrtc_kernels_" + digest.hexdigest()[:16], cpp_sources=[cpp],
                cuda_sources=[self.PRELUDE, source, cuda], functions=[launcher for _, launcher in kernels],
                extra_cuda_cflags=flags, verbose=False)
        return self._modules[index]


_nvrtc_runtime = _NvrtcRuntime([
@EXTENSIONS@
])
# --- end of nvrtc_runtime, standalone ------------------------------------------------
'''


def _py_str(text):
    """A Python literal for text: a raw triple-quoted string when it can be one."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def _launcher_name(name, taken):
    base = "launch_" + (re.sub(r"\W+", "_", name).strip("_") or "kernel")
    out, n = base, 2
    while out in taken:
        out, n = "%s_%d" % (base, n), n + 1
    taken.add(out)
    return out


def _shim(kernels):
    """The shim's text for these kernels: one extension per source and options."""
    groups = []  # [(source, options, [KernelUse])]
    for use in kernels:
        for g in groups:
            if g[0] == use.source and g[1] == use.options:
                break
        else:
            g = (use.source, use.options, [])
            groups.append(g)
        g[2].append(use)
    entries = []
    for source, options, uses in groups:
        taken = set()
        pairs = [(use.name, _launcher_name(use.name, taken)) for use in uses]
        entries.append("    (%r,\n     %r, %r,\n     %r)," % (hashlib.sha256(source.encode()).hexdigest(), options,
                                                         cuda_flags(options), pairs))
    return SHIM_CODE.replace("@PRELUDE@", _py_str(CUDA_PRELUDE)).replace("@EXTENSIONS@", "\n".join(entries))


# --- the rewrite --------------------------------------------------------------------------------


def _char_col(lines, lineno, byte_col):
    """ast's column (UTF-8 bytes) -> a str index in that line."""
    return len(lines[lineno - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _lines(text):
    """text's lines with their ends, split where Python's tokenizer splits
    them (\\n, \\r\\n, \\r; not str.splitlines' form feeds and others)."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)", text)
    rest = text[sum(len(l) for l in lines):]
    return lines + [rest] if rest else lines


def _top_statement_line(tree, node):
    """The first line of the module-level statement that holds node (decorators included)."""
    for statement in tree.body:
        for n in ast.walk(statement):
            if n is node:
                decorators = getattr(statement, "decorator_list", None) or []
                return min([statement.lineno] + [d.lineno for d in decorators])
    return node.lineno


def analyse(candidate_source):
    """candidate source -> Delivery; raises DeliverError."""
    try:
        tree = ast.parse(candidate_source)
    except SyntaxError as e:
        raise DeliverError("the candidate does not parse: %s" % e.msg, e.lineno)
    imports = _find_imports(tree)
    if not imports.statements:
        return Delivery(candidate_source, [])  # pure torch (or its own load_inline): already standalone
    kernels = _find_kernels(tree, imports)

    lines = _lines(candidate_source)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    edits = []  # (line, col, end_line, end_col, text), 1-based lines and str columns
    for node, text in imports.statements:
        edits.append((node.lineno, _char_col(lines, node.lineno, node.col_offset), node.end_lineno,
                      _char_col(lines, node.end_lineno, node.end_col_offset), text))
    first = min(_top_statement_line(tree, node) for node, _ in imports.statements)
    edits.append((first, 0, first, 0, _shim(kernels)))
    # Apply from the end, so earlier positions stay valid.
    text = "".join(lines)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for line, col, end_line, end_col, replacement in sorted(edits, key=lambda e: (e[0], e[1], e[2], e[3]),
                                                             reverse=True):
        start = offsets[line - 1] + col
        end = offsets[end_line - 1] + end_col
        text = text[:start] + replacement + text[end:]
    try:
        compile(text, "<delivered>", "exec", dont_inherit=True)
        left = hiera_imports(text)
    except SyntaxError as e:  # a bug here, not in the candidate
        raise DeliverError("the delivered text does not compile (%s, line %s); please report this" % (e.msg, e.lineno))
    if left:
        raise DeliverError("the delivered text still imports hiera (%s)" % "; ".join(left))
    return Delivery(text, kernels)


def to_delivered(candidate_source):
    """The standalone form of a candidate module (see the module's docstring)."""
    return analyse(candidate_source).source


# --- the job -----------------------------------------------------------------------------------


def _failed(check, message):
    return {"verdict": "failed", "failures": [{"check": check, "message": message}], "trials": []}


_ERROR_LINE = re.compile(r"(\berror\b|\bError\b|undefined symbol|: fatal)")


def _build_failure(text):
    """A load_inline failure's text, shortened to its compiler errors."""
    lines = [l.strip() for l in text.splitlines()]
    errors = [l for l in lines if _ERROR_LINE.search(l) and not l.startswith("[") and len(l) < 600]
    return "\n".join(errors[:12]) if errors else text[-2000:].strip()


def deliver(params):
    """params {"task", "trials", "timing_trials", "seed", ...} -> {"delivered_source", "evaluation"}."""
    from . import evaluate as evaluate_mod
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    for name, default, minimum in (("trials", evaluate_mod.MIN_TRIALS, evaluate_mod.MIN_TRIALS),
                                   ("timing_trials", 50, 1)):
        evaluate_mod._int_param(params, name, default, minimum)  # refused here as evaluate would
    seed = evaluate_mod._int_param(params, "seed", 1234, -(1 << 62))
    job = evaluate_mod.Job(params.get("task"), seed)  # checks the task and picks the device; loads nothing
    if job.candidate_source is None:
        raise RpcError(INVALID_PARAMS, "params.task.candidate.source must be a string")
    try:
        delivery = analyse(job.candidate_source)
    except DeliverError as e:
        return {"delivered_source": None,
                "evaluation": _failed("deliver", "the candidate cannot be delivered: %s" % e.message)}
    out = {"delivered_source": delivery.source}
    if delivery.needs_gpu and job.device.type != "cuda":
        out["evaluation"] = _failed("deliver", (
            "the delivered form builds its CUDA kernels (%s) with torch's NVRTC or load_inline and "
            "needs a GPU; this job runs on the CPU (task.device %r), so the delivered form was not verified"
            % (", ".join(k.name for k in delivery.kernels), job.task.get("device"))))
        return out
    task = dict(job.task)
    task["candidate"] = dict(task.get("candidate") or {}, source=delivery.source)
    evaluation = evaluate_mod.evaluate(dict(params, task=task))
    if delivery.needs_gpu:
        # The delivered kernels are built when the module loads (in the candidate's process): a build that
        # fails there reads as the delivered form's failure, with its compiler errors.
        for f in evaluation.get("failures", []):
            if f.get("check") == "compile":
                f["check"] = "deliver"
                f["message"] = ("the delivered form's kernels do not build (torch NVRTC or load_inline): %s"
                                % _build_failure(f.get("message", "")))
    out["evaluation"] = evaluation
    return out
