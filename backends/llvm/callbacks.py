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
"""
from __future__ import annotations

import ctypes

_KEPT: list = []                # every callback made here, alive for the process


def c_function(fn, restype, *argtypes):
    """``fn`` as a C function ``restype (*)(argtypes...)`` (kept alive)."""
    cb = ctypes.CFUNCTYPE(restype, *argtypes)(fn)
    _KEPT.append(cb)
    return cb


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
