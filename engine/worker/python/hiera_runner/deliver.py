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

The generated text is in templates/: the rt-compatible object
(nvrtc_shim.py.tmpl), the argument types it shares with nvrtc_runtime
(scalars.py.tmpl) and the C++ launch helper (launch_prelude.cu.tmpl).

A candidate that does not use nvrtc_runtime is delivered unchanged. One whose
kernels cannot be resolved before it runs (a source built at run time, an
f-string, a name chosen in a loop), that uses the runtime other than through
rt.compile(...) calls and the argument types, or that imports anything else
of hiera, is refused with a DeliverError saying why.
"""

import ast
import hashlib
import re
import string
import textwrap

from . import templates
from .jsonrpc import INVALID_PARAMS, RpcError
from .nvrtc_runtime import SCALAR_TYPES  # the argument types (templates/scalars.py.tmpl)

SHIM = "_nvrtc_runtime"  # the name of the rt-compatible object in a delivered module
RUNTIME_MODULE = "hiera_runner.nvrtc_runtime"
# nvrtc_runtime's names that have a delivered form: compile and the argument types.
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
# Its text is in templates/ (see templates/__init__.py); here it is filled in.

# Compiled before each kernel source: the headers and the launch helper (which
# does not depend on the kernel), then `#line` so that nvcc's messages give the
# kernel source's own line numbers, as NVRTC's did.
CUDA_PRELUDE = templates.text("launch_prelude.cu.tmpl") + '#line 1 "kernel.cu"'  # the next line is the kernel's 1

# The rt-compatible object, with nvrtc_runtime's argument types (their one definition) inside it.
SHIM_TEMPLATE = string.Template(templates.text("nvrtc_shim.py.tmpl"))
SCALARS_CODE = templates.text("scalars.py.tmpl")


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
    return SHIM_TEMPLATE.substitute(prelude=_py_str(CUDA_PRELUDE), scalars=textwrap.indent(SCALARS_CODE, "    "),
                                    extensions="\n".join(entries))


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


SPLIT_TF32_MODULE = "hiera_runner.split_tf32"
# What a delivered module binds the candidate's name for split_tf32 to: the two functions candidates may call.
_SPLIT_TF32_BINDING = ("class %s(object):  # split_tf32's products, inlined above\n"
                       "    linear = staticmethod(_tf32x3_linear)\n"
                       "    matmul = staticmethod(_tf32x3_matmul)\n")


def delivered_split_tf32():
    """split_tf32's inlined code as a delivered module holds it: its nvrtc_runtime import bound to the shim."""
    from . import split_tf32
    block = split_tf32.inlined_source()
    line = "from hiera_runner import nvrtc_runtime as _tf32x3_rt\n"
    if block.count(line) != 1:
        raise DeliverError("split_tf32's inlined code lost its nvrtc_runtime import; please report this")
    return block.replace(line, _binding([("_tf32x3_rt", SHIM)]) + "\n")


def _inline_split_tf32(source, tree):
    """Each module-level `from hiera_runner import split_tf32 as NAME` (or `import hiera_runner.split_tf32 as
    NAME`) becomes a class NAME with its linear and matmul, the first after split_tf32's inlined code (its
    nvrtc_runtime import then delivered like the candidate's own). Returns the text, unchanged without one."""
    statements = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "hiera_runner":
            names = [a for a in node.names if a.name == "split_tf32"]
        elif isinstance(node, ast.Import):
            names = [a for a in node.names if a.name == SPLIT_TF32_MODULE]
        else:
            continue
        if not names:
            continue
        if len(node.names) != 1 or not names[0].asname:
            raise DeliverError("import %s on its own line, with `as`: `from hiera_runner import split_tf32 as "
                               "name`" % SPLIT_TF32_MODULE, node.lineno)
        statements.append((node, names[0].asname))
    if not statements:
        return source
    from . import split_tf32
    lines = _lines(source)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    for i, (node, name) in reversed(list(enumerate(statements))):
        if node.col_offset != 0 or node.lineno != node.end_lineno:
            raise DeliverError("import %s on a line of its own" % SPLIT_TF32_MODULE, node.lineno)
        lines[node.lineno - 1] = (split_tf32.inlined_source() if i == 0 else "") + _SPLIT_TF32_BINDING % name
    return "".join(lines)


def analyse(candidate_source):
    """candidate source -> Delivery; raises DeliverError."""
    try:
        tree = ast.parse(candidate_source)
    except SyntaxError as e:
        raise DeliverError("the candidate does not parse: %s" % e.msg, e.lineno)
    inlined = _inline_split_tf32(candidate_source, tree)
    if inlined != candidate_source:
        candidate_source = inlined
        tree = ast.parse(candidate_source)
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
    evaluation = evaluate_mod.evaluate(dict(params, task=task), delivered=True)
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
