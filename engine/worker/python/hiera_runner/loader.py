"""Loading KernelBench-format sources into fresh module namespaces.

Each source becomes its own module object (never shared between reference and
candidate), registered in linecache under a pseudo file name so tracebacks,
inspect.getsource and torch.jit can see its lines, and in sys.modules while it
is in use (dataclasses, pickling and torch.jit look modules up there).
"""

import itertools
import linecache
import sys
import traceback
import types

_counter = itertools.count()


class LoadError(Exception):
    """The source could not be loaded: check is "compile" (syntax, missing
    names, a failed extension build) or "runtime" (an exception while running
    the module's top level)."""

    def __init__(self, check, message, line=None):
        Exception.__init__(self, message)
        self.check = check
        self.message = message
        self.line = line


class Loaded(object):
    def __init__(self, module, filename):
        self.module = module
        self.filename = filename

    def get(self, name):
        return self.module.__dict__.get(name)

    def unload(self):
        sys.modules.pop(self.module.__name__, None)
        linecache.cache.pop(self.filename, None)


def load(source, role):
    """source text -> Loaded; role ("reference" or "candidate") names the
    pseudo file ("<candidate>") that tracebacks and messages mention."""
    n = next(_counter)
    filename = "<%s>" % role
    modname = "hiera_%s_%d" % (role, n)
    lines = source.splitlines(True)
    # mtime None: linecache.checkcache never evicts an entry for a file that doesn't exist.
    linecache.cache[filename] = (len(source), None, lines, filename)
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as e:
        raise LoadError("compile", "%s: %s (%s line %s)" % (type(e).__name__, e.msg, role, e.lineno), e.lineno)
    module = types.ModuleType(modname)
    module.__file__ = filename
    sys.modules[modname] = module
    loaded = Loaded(module, filename)
    try:
        exec(code, module.__dict__)
    except BaseException as e:  # SystemExit from a candidate's top level too
        if isinstance(e, KeyboardInterrupt):
            raise
        check = "compile" if _is_extension_build_error(e) else "runtime"
        raise LoadError(check, describe_exception(e, filename, role), exception_line(e, filename))
    return loaded


def _is_extension_build_error(exc):
    """True when the exception came out of torch.utils.cpp_extension (a
    load_inline/load build that failed: a compile error, not a runtime one)."""
    tb = exc.__traceback__
    while tb is not None:
        if "cpp_extension" in tb.tb_frame.f_code.co_filename:
            return True
        tb = tb.tb_next
    return False


def exception_line(exc, filename):
    """The line of the innermost traceback frame in filename, or None."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def describe_exception(exc, filename, role, limit=2000):
    """"ValueError: bad thing (candidate line 7: `x = f(y)`)", bounded."""
    text = "%s: %s" % (type(exc).__name__, str(exc).strip())
    if len(text) > limit:
        text = text[:limit] + " ..."
    line = exception_line(exc, filename)
    if line is not None:
        src = linecache.getline(filename, line).strip()
        where = "%s line %d" % (role, line)
        if src:
            where += ": `%s`" % (src if len(src) <= 120 else src[:117] + "...")
        text += " (%s)" % where
    return text


def format_traceback(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
