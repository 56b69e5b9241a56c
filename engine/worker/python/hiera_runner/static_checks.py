"""Static checks on a candidate's source (the `static` rule), with Python's ast.

They catch what a run cannot: extra streams, threads or processes (work the
timer does not see), tampering with timers or synchronisation, try/except
fallbacks to the reference, and precision downcasts the contract does not
allow. Names are resolved through the source's imports, so `import torch as t`
or `from torch.cuda import Stream` do not hide a use. Each finding names its
line.
"""

import ast
import re

_FORBIDDEN_MODULES = {
    "threading": "threads",
    "_thread": "threads",
    "multiprocessing": "processes",
    "subprocess": "processes",
    "concurrent.futures": "threads or processes",
    "pty": "processes",
    "socket": "network access",
    "ssl": "network access",
    "http": "network access",
    "urllib": "network access",
    "requests": "network access",
    "ftplib": "network access",
    "smtplib": "network access",
}
# Reaching into the harness's frames and objects (to find and patch its comparisons or clocks).
_INTROSPECTION = {"sys._getframe", "inspect.currentframe", "inspect.stack", "inspect.getouterframes",
                  "gc.get_objects", "gc.get_referrers", "gc.get_referents"}
_SUPPRESS = {"contextlib.suppress"}
_PROCESS_CALLS = re.compile(r"^os\.(system|fork|forkpty|popen|posix_spawnp?|spawn\w*|exec\w*)$")
_STREAMS = {
    "torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.set_stream", "torch.cuda.ExternalStream",
    "torch.cuda.streams.Stream", "torch.cuda.streams.ExternalStream", "torch.Stream", "torch.stream",
    "torch.cuda.StreamContext",
}
# Attributes a candidate must not replace: the timer and synchronisation the runner relies on.
_PROTECTED = (
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.streams.Event", "torch.cuda.current_stream",
    "torch.cuda.default_stream", "torch.cuda.Stream.synchronize", "torch.synchronize", "torch.cuda",
    "time",
)
# What torch.backends' TF32 switches call underneath: the same switch, by another name.
_PRIVATE_TF32_SETTERS = {"torch._C._set_cublas_allow_tf32", "torch._C._set_cudnn_allow_tf32"}
_FP16 = {"torch.float16", "torch.half"}
_BF16 = {"torch.bfloat16"}
_AUTOCAST = {"torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast"}
# C++ in string constants (load_inline sources): streams and threads there too.
_CPP_PATTERNS = [
    (re.compile(r"\bcudaStreamCreate\w*"), "creates a CUDA stream in C++ (cudaStreamCreate); work on other streams escapes the timer"),
    (re.compile(r"\bgetStreamFromPool\b"), "takes a stream from the pool in C++ (getStreamFromPool); work on other streams escapes the timer"),
    (re.compile(r"\bstd::(thread|async)\b"), "starts a thread in C++ (std::thread/std::async)"),
    (re.compile(r"\bpthread_create\b"), "starts a thread in C++ (pthread_create)"),
]


def _aliases(tree):
    """Local name -> qualified name, from every import in the source."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    out[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                out[a.asname or a.name] = node.module + "." + a.name
    return out


class _Checker(ast.NodeVisitor):
    def __init__(self, aliases, allow, tf32_lines=()):
        self.aliases = aliases
        self.allow = allow
        self.tf32_lines = list(tf32_lines)  # (first, last) line ranges whose TF32 switches are exempt
        self.findings = []        # (line, message)
        self.params = [set()]     # parameters of the enclosing functions
        self.in_handler = 0
        self.depth = 0            # functions entered (0: module level)

    def add(self, node, message):
        self.findings.append((getattr(node, "lineno", 0), message))

    def qual(self, node):
        """Dotted qualified name of a Name/Attribute chain, or None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value)
            return base + "." + node.attr if base else None
        return None

    # --- imports: threads and processes ---------------------------------
    def visit_Import(self, node):
        for a in node.names:
            self._check_module(node, a.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.module and node.level == 0:
            self._check_module(node, node.module)
            for a in node.names:
                full = node.module + "." + a.name
                self._check_module(node, full)
                if _PROCESS_CALLS.match(full):
                    self.add(node, "imports %s (no extra processes)" % full)
        self.generic_visit(node)

    def _check_module(self, node, name):
        for mod, what in _FORBIDDEN_MODULES.items():
            if name == mod or name.startswith(mod + "."):
                if what in ("threads", "processes", "threads or processes"):
                    self.add(node, "imports %s (no extra %s: work outside the timed call)" % (name, what))
                else:
                    self.add(node, "imports %s (no %s in a candidate)" % (name, what))
                return

    # --- functions: remember parameters (for "returns its input") --------
    def _visit_function(self, node):
        args = node.args
        names = {a.arg for a in args.args + args.kwonlyargs + getattr(args, "posonlyargs", [])}
        if args.vararg:
            names.add(args.vararg.arg)
        names.discard("self")
        names.discard("cls")
        self.params.append(names)
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        self.params.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Lambda(self, node):
        self.generic_visit(node)

    # --- names and attributes: processes, streams ------------------------
    def visit_Attribute(self, node):
        self._check_reference(node)
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.aliases:
            self._check_reference(node)

    def _check_reference(self, node):
        q = self.qual(node)
        if not q:
            return
        if _PROCESS_CALLS.match(q):
            self.add(node, "uses %s (no extra processes)" % q)
        elif q in _STREAMS:
            self.add(node, "uses %s (no extra streams: work on other streams escapes the timer)" % q)

    # --- calls: dynamic imports, setattr, downcasts, precision switches ---
    def visit_Call(self, node):
        q = self.qual(node.func)
        first = node.args[0] if node.args else None
        first_str = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
        if q in ("__import__", "importlib.import_module", "importlib.__import__"):
            if first_str:
                self._check_module(node, first_str)
            else:
                self.add(node, "imports a module whose name is computed (%s of a non-constant): what it loads "
                         "cannot be checked" % q)
        if q in _INTROSPECTION:
            self.add(node, "uses %s (no reaching into the harness's frames or objects)" % q)
        if q in _SUPPRESS:
            self.add(node, "uses %s: an exception swallowed and the call carried on is a fallback; let it raise" % q)
        if q in ("setattr", "delattr") and len(node.args) >= 2:
            target = self.qual(node.args[0])
            name = node.args[1]
            if q == "setattr" and isinstance(name, ast.Constant) and name.value in ("allow_tf32", "fp32_precision"):
                value = node.args[2] if len(node.args) > 2 else None
                if name.value == "allow_tf32" and not _is_false(value):
                    self._downcast(node, "tf32", "sets allow_tf32 through setattr")
                elif name.value == "fp32_precision" and _str(value) != "ieee":
                    self._downcast(node, "tf32", "sets fp32_precision through setattr")
            if target and isinstance(name, ast.Constant) and isinstance(name.value, str):
                self._check_protected(node, target + "." + name.value, q)
        if q and (q.endswith("mock.patch") or q == "patch") and first_str:
            self._check_protected(node, first_str, "mock.patch")
        if q and (q.endswith("mock.patch.object") or q == "patch.object") and len(node.args) >= 2:
            target = self.qual(node.args[0])
            name = node.args[1]
            if target and isinstance(name, ast.Constant) and isinstance(name.value, str):
                self._check_protected(node, target + "." + name.value, "mock.patch.object")
        if isinstance(node.func, ast.Attribute) and not node.args and not node.keywords:
            if node.func.attr == "half":
                self._downcast(node, "fp16", "`.half()` casts to float16")
            elif node.func.attr == "bfloat16":
                self._downcast(node, "bf16", "`.bfloat16()` casts to bfloat16")
        for value in list(node.args) + [k.value for k in node.keywords]:
            vq = self.qual(value)
            if vq in _FP16:
                self._downcast(value, "fp16", "uses %s in a call (a float16 downcast)" % vq)
            elif vq in _BF16:
                self._downcast(value, "bf16", "uses %s in a call (a bfloat16 downcast)" % vq)
        if q in _AUTOCAST and not any(k.arg == "enabled" and _is_false(k.value) for k in node.keywords):
            dtypes = [self.qual(k.value) for k in node.keywords if k.arg == "dtype"]
            if any(d in _BF16 for d in dtypes):
                pass  # reported above as a bfloat16 use
            elif not any(d in _FP16 for d in dtypes):
                self._downcast(node, "fp16", "uses %s (autocast runs matmuls in float16)" % q)
        if q in _PRIVATE_TF32_SETTERS and not _is_false(first):
            self._downcast(node, "tf32", "calls %s" % q)
        if q in ("torch.set_float32_matmul_precision", "torch._C._set_float32_matmul_precision") and \
                first_str in ("high", "medium"):
            self._downcast(node, "tf32", "torch.set_float32_matmul_precision(%r) enables TF32 matmuls" % first_str)
        self.generic_visit(node)

    def _downcast(self, node, kind, message):
        line = getattr(node, "lineno", 0)
        if kind == "tf32" and any(lo <= line <= hi for lo, hi in self.tf32_lines):
            return  # hiera_runner.split_tf32, inlined in a delivered module: TF32 for its 3xTF32 products only
        if kind not in self.allow:
            self.add(node, "%s, which numerics.allow does not permit (add \"%s\")" % (message, kind))

    # --- assignments: timers, synchronisation, TF32 switches ---------------
    def visit_Assign(self, node):
        for t in node.targets:
            self._check_target(t, node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._check_target(node.target, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self._check_target(node.target, node.value)
        self.generic_visit(node)

    def visit_Delete(self, node):
        for t in node.targets:
            self._check_target(t, None)
        self.generic_visit(node)

    def _check_target(self, target, value):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._check_target(t, None)
            return
        if isinstance(target, ast.Subscript):
            # sys.modules["time"] = fake
            if self.qual(target.value) == "sys.modules":
                self.add(target, "replaces an entry of sys.modules (no changes to timers or synchronisation)")
            return
        if not isinstance(target, ast.Attribute):
            return
        # The TF32 switches by their attribute's name, whatever the object is called (m = torch.backends.cuda.matmul;
        # m.allow_tf32 = True is the same switch).
        if target.attr == "allow_tf32" and value is not None and not _is_false(value):
            self._downcast(target, "tf32", "sets %s" % (self.qual(target) or "allow_tf32"))
            return
        if target.attr == "fp32_precision" and value is not None and _str(value) != "ieee":
            self._downcast(target, "tf32", "sets %s to something other than 'ieee'" % (self.qual(target) or "fp32_precision"))
            return
        q = self.qual(target)
        if not q:
            return
        self._check_protected(target, q, "assignment")

    def _check_protected(self, node, q, how):
        for p in _PROTECTED:
            if q == p or q.startswith(p + "."):
                self.add(node, "replaces %s (%s; no changes to timers or synchronisation)" % (q, how))
                return

    # --- try/except falling back to the reference --------------------------
    def visit_Try(self, node):
        for h in node.handlers:
            reason = self._fallback(h) or self._swallows(h)
            if reason:
                self.add(h, "try/except whose handler %s (no fallback to the reference)" % reason)
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def _fallback(self, handler):
        params = self.params[-1]
        for n in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
            if isinstance(n, ast.Name) and n.id == "Model":
                return "uses the reference `Model`"
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("forward", "__call__"):
                v = n.func.value
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
                    return "calls super().%s" % n.func.attr
            if isinstance(n, ast.Return) and n.value is not None and _returns_param(n.value, params):
                return "returns its input unchanged"
        return None

    def _swallows(self, handler):
        """However it is written, a handler that can finish without raising
        lets the code after it compute the output another way: a fallback.
        Only an optional import at module level may do so."""
        if _always_raises(handler.body):
            return None
        if self.depth == 0 and _catches_only(handler, ("ImportError", "ModuleNotFoundError")) and \
                all(isinstance(s, (ast.Pass, ast.Assign)) and (not isinstance(s, ast.Assign) or
                                                                isinstance(s.value, ast.Constant))
                    for s in handler.body):
            return None
        return "swallows the exception and carries on (a fast path that falls back to other code when it fails " \
               "hides the failure; let it raise)"

def _always_raises(body):
    """Whether every path through the statements ends in a raise."""
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            return True
        if isinstance(stmt, ast.If) and _always_raises(stmt.body) and _always_raises(stmt.orelse):
            return True
    return False


def _catches_only(handler, names):
    t = handler.type
    elts = t.elts if isinstance(t, ast.Tuple) else [t]
    return t is not None and all(isinstance(e, ast.Name) and e.id in names for e in elts)


def _returns_param(value, params):
    if isinstance(value, ast.Name):
        return value.id in params
    if isinstance(value, (ast.Tuple, ast.List)):
        return bool(value.elts) and all(_returns_param(e, params) for e in value.elts)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.args:
        return value.func.attr in ("clone", "contiguous", "detach") and _returns_param(value.func.value, params)
    return False


def _is_false(value):
    return isinstance(value, ast.Constant) and value.value in (False, 0, None)


def _str(value):
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None


def _check_strings(tree, findings):
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 16:
            for pattern, message in _CPP_PATTERNS:
                m = pattern.search(node.value)
                if m:
                    line = getattr(node, "lineno", 0) + node.value.count("\n", 0, m.start())
                    findings.append((line, message))


def normalise_allow(allow):
    """numerics.allow -> {"fp16", "bf16", "tf32", "inplace", ...} (aliases folded)."""
    out = set()
    for a in allow or ():
        a = str(a).strip().lower()
        out.add({"float16": "fp16", "half": "fp16", "bfloat16": "bf16"}.get(a, a))
    return out


def native_precisions(reference_source):
    """Precisions the reference itself uses (a float16 task may be written in
    float16): {"fp16", "bf16", "tf32"} subset, from its source."""
    try:
        tree = ast.parse(reference_source)
    except SyntaxError:
        return set()
    aliases = _aliases(tree)
    checker = _Checker(aliases, set())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            q = checker.qual(node)
            if q in _FP16:
                out.add("fp16")
            elif q in _BF16:
                out.add("bf16")
            elif q in ("torch.backends.cuda.matmul.allow_tf32", "torch.set_float32_matmul_precision"):
                out.add("tf32")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
            if node.func.attr == "half":
                out.add("fp16")
            elif node.func.attr == "bfloat16":
                out.add("bf16")
    return out


def split_tf32_blocks(source):
    """(first, last) line ranges of source holding hiera_runner.split_tf32's inlined code exactly as deliver.py
    writes it (its markers included): a delivered module's copy of the trusted 3xTF32 products."""
    from . import deliver
    block = deliver.delivered_split_tf32()
    lines = source.splitlines(True)
    first_line = block.splitlines(True)[0]
    count = len(block.splitlines(True))
    out = []
    for i, line in enumerate(lines):
        if line == first_line and "".join(lines[i:i + count]) == block:
            out.append((i + 1, i + count))
    return out


SPLIT_TF32 = "hiera_runner.split_tf32"
_SPLIT_TF32_CALLS = ("linear", "matmul")


def _split_tf32_uses(tree, checker, findings):
    """A candidate calls hiera_runner.split_tf32's linear and matmul and nothing else of it: its other names
    set TF32 for whatever they are handed. Judged on qualified names, so every import form is covered
    (`import hiera_runner.split_tf32` leaves the module reachable as hiera_runner.split_tf32)."""
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == SPLIT_TF32:
            findings.append((node.lineno, "imports from %s (only `from hiera_runner import split_tf32 as name` "
                                          "and name.linear / name.matmul)" % SPLIT_TF32))
            continue
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                node.args[0].value == SPLIT_TF32 and checker.qual(node.func) in (
                    "__import__", "importlib.import_module", "importlib.__import__"):
            findings.append((node.lineno, "imports %s at run time (only `from hiera_runner import split_tf32 as "
                                          "name`)" % SPLIT_TF32))
            continue
        if not isinstance(node, (ast.Name, ast.Attribute)) or isinstance(parents.get(node), (ast.Import, ast.ImportFrom)):
            continue
        if checker.qual(node) != SPLIT_TF32:
            continue
        parent = parents.get(node)
        if not (isinstance(parent, ast.Attribute) and parent.attr in _SPLIT_TF32_CALLS and isinstance(node.ctx, ast.Load)):
            name = node.id if isinstance(node, ast.Name) else SPLIT_TF32
            findings.append((node.lineno, "uses %s other than through %s.linear(...) and %s.matmul(...)"
                             % (SPLIT_TF32, name, name)))


def check(source, allow=(), delivered=False):
    """Findings as "line N: ..." strings, sorted by line, without duplicates.
    A syntax error is not reported here (the loader reports it as `compile`).
    `delivered`: the source is a delivered module (deliver.py's text): the
    TF32 switches inside its inlined copy of hiera_runner.split_tf32 are
    not findings."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    checker = _Checker(_aliases(tree), normalise_allow(allow), split_tf32_blocks(source) if delivered else ())
    checker.visit(tree)
    findings = checker.findings
    _split_tf32_uses(tree, checker, findings)
    _check_strings(tree, findings)
    seen = set()
    out = []
    for line, message in sorted(findings, key=lambda f: f[0]):
        if (line, message) not in seen:
            seen.add((line, message))
            out.append("line %d: %s" % (line, message))
    return out
