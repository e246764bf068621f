"""Watch what the JIT compiles: the names of the LLVM modules jit._emit
compiles (a kernel group's, or one helper-library entry's), from a fresh
helper library with the on-disk cache off, so that every compile shows."""
from __future__ import annotations

from ptxc.backends.llvm import helper_lib, jit


def emitted_names(monkeypatch) -> list:
    """The list that jit._emit's calls will append their names to."""
    monkeypatch.setenv("PTXC_CACHE", "0")
    monkeypatch.setattr(helper_lib, "_objs", {})
    names = []
    real = jit._emit

    def emit(text, level, name):
        names.append(name)
        return real(text, level, name)
    monkeypatch.setattr(jit, "_emit", emit)
    return names
