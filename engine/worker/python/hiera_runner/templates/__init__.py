"""The text of the code that hiera_runner generates, one file per piece:

- nvrtc_shim.py.tmpl: the rt-compatible object a delivered module defines
  (deliver.py), a string.Template;
- scalars.py.tmpl: the argument types int32 ... pointer, which both the
  delivered object and nvrtc_runtime.py are made of;
- launch_prelude.cu.tmpl: the C++ launch helper a delivered load_inline
  build compiles before each kernel source.

A template's leading lines that start with "##" are its notes (a comment in
Python); text() leaves them out. Read from beside this file: the standard
library only, and no import of anything else of hiera.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def read(name):
    """The file as it is, notes included (for exec: its line numbers are the file's)."""
    with open(path(name), encoding="utf-8", newline="") as f:
        return f.read()


def text(name):
    """The template's text without its leading "##" notes."""
    lines = read(name).splitlines(True)
    i = 0
    while i < len(lines) and lines[i].startswith("##"):
        i += 1
    return "".join(lines[i:])
