"""C symbols that JIT-compiled kernels call or read in this process: Python
callbacks (ctypes "Callback functions": ``CFUNCTYPE(restype, *argtypes)``
wrapping a Python function) and ctypes data blocks, made resolvable by
name through ``llvmlite.binding.add_symbol``.

A module that gives kernels a symbol declares it once at import and
registers it when ``jit.llvm()`` initialises llvmlite:

    _cb = callbacks.c_function(_record, None, ctypes.c_void_p, ctypes.c_int32)

    def register_symbols(binding) -> None:
        callbacks.add_symbols(binding, {"ptxc_memcheck": _cb})

``c_function`` keeps the callback object alive for the whole process (ctypes
docs: a callback must be kept referenced as long as C code may call it).

Every call from native code into Python is counted per function
(``calls()``: ``{module.function: calls}`` since process start, or since
``reset_calls()``), so that a benchmark can report the Python callbacks of a
launch (bench/sync_paths.py, docs/performance-sync.md). The count costs one
locked integer add per call, small beside the callback itself. With
``PTXC_CALLBACK_COUNTS=FILE`` in the environment the process writes the
counts to FILE (JSON) when it exits (bench/callback_counts.py: whole apps).
"""
from __future__ import annotations

import atexit
import ctypes
import functools
import json
import os
import threading

_KEPT: list = []                # every callback made here, alive for the process
_CALLS: dict[str, int] = {}     # "module.function" -> calls from native code
_LOCK = threading.Lock()


def c_function(fn, restype, *argtypes):
    """``fn`` as a C function ``restype (*)(argtypes...)`` (kept alive and
    counted: ``calls()``)."""
    name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
    _CALLS.setdefault(name, 0)

    def counted(*a):
        with _LOCK:
            _CALLS[name] += 1
        return fn(*a)
    cb = ctypes.CFUNCTYPE(restype, *argtypes)(counted)
    _KEPT.append(cb)
    return cb


def calls() -> dict[str, int]:
    """{callback name: calls from native code} (a copy)."""
    with _LOCK:
        return dict(_CALLS)


def reset_calls() -> None:
    with _LOCK:
        for k in _CALLS:
            _CALLS[k] = 0


def _dump(path: str) -> None:
    try:
        with open(path, "w") as f:
            json.dump(calls(), f)
    except OSError:
        pass


if os.environ.get("PTXC_CALLBACK_COUNTS"):
    atexit.register(_dump, os.environ["PTXC_CALLBACK_COUNTS"])


def guarded(fn, failed=None):
    """``fn`` that never lets an exception cross the native frames that
    call it: the traceback is printed and ``failed`` returned instead."""
    def call(*a):
        try:
            return fn(*a)
        except Exception:
            import traceback
            traceback.print_exc()
            return failed
    return call


def address(obj) -> int:
    """The address of a ctypes callback (its code) or data object."""
    if isinstance(obj, ctypes._CFuncPtr):
        return ctypes.cast(obj, ctypes.c_void_p).value
    return ctypes.addressof(obj)


def add_symbols(binding, symbols: dict) -> None:
    """Make each ``{name: callback or ctypes data}`` resolvable by the JIT
    (``binding`` is llvmlite.binding)."""
    for name, obj in symbols.items():
        binding.add_symbol(name, address(obj))


def cta_linear(cta: int) -> int:
    """The linear index of the CTA whose state is at address ``cta``
    (layout.CTA_LINEAR holds its low 32 bits, CTA_LINEAR_HI the high ones:
    a grid may hold more than 2**32 CTAs)."""
    import struct
    from ptxc.backends.llvm import layout as Lo
    lo, = struct.unpack("<I", ctypes.string_at(cta + Lo.CTA_LINEAR, 4))
    hi, = struct.unpack("<I", ctypes.string_at(cta + Lo.CTA_LINEAR_HI, 4))
    return hi << 32 | lo
