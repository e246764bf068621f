"""Texture fetches in generated code: the native descriptor table and the
LLVM IR of ``tex`` for the common cases, so that a fetch costs no call into
Python (issue 25; docs/performance-sync.md).

The IR is in texture_ir.py. Every registered texture gets a row of 25 i64 in a table the generated code
reads through the symbol ``ptxc_tex_table`` (``{ptr rows, i64 count}``,
indexed by handle: handles are small consecutive integers,
texture_objects.register). A row holds the memory address and the sampler
state of texture_objects.Texture (fields ``F_*``); ``F_OK`` is 0 for what
this path does not do (surfaces, half-float textures, a texture
whose memory is smaller than its dimensions say, destroyed handles).

The per-lane code repeats texture_objects.sample/read_at/convert and
texture.put_results operation by operation (the same float32 and float64
steps in the same order: point sampling ``T[floor(x)]``; linear filtering
with ``xB = x - 0.5`` and the 9-bit weight ``floor(frac * 256 + 0.5) / 256``,
the corners summed in itertools.product order; address modes wrap, clamp,
mirror, border; normalized reads ``v / (2^n - 1)``), so both paths give the
same bits. A lane the native code does not do (the row is not OK, the
handle is not in the table, the instruction's result type or coordinate
kind does not match the texture, a coordinate whose floor is not below
2^31 in magnitude or is NaN) is left to the Python callback
(texture.run_form), which keeps every error message. Layered and cubemap
fetches (texture_layered_ir.py, texture_cube_ir.py), ``tld4`` (texture_gather_ir.py) and
``suld.b``/``sust.b`` (surface_ir.py, rows with ``F_SURF``) run in
generated code too.
"""
from __future__ import annotations

import contextlib
import ctypes
import threading

import numpy as np

NFIELDS = 25
(F_BASE, F_OK, F_KIND, F_BITS, F_CH, F_EB, F_W, F_H, F_D, F_PITCH, F_LINEAR, F_FILTER,
 F_NORM, F_READN, F_MODE) = range(15)
F_BORDER = 17
F_RETF = 21
F_SURF = 22                                # 1: a surface this path does (surface_ir.py)
F_LAYERED = 23                             # 1: layered (texture_layered_ir.py; a layered surface)
F_CUBE = 24                                # 1: cubemap (texture_cube_ir.py; F_LAYERED: layered cubemap)
KINDS = ("s", "u", "f")
MODES = ("wrap", "clamp", "mirror", "border")
TABLE = "ptxc_tex_table"

_lock = threading.Lock()
_header = (ctypes.c_uint64 * 2)()        # rows address, row count (the symbol)
_rows = np.zeros((0, NFIELDS), np.uint64)
_kept: list = []                          # old row arrays (a running kernel may read them)
_enabled = True


def _grow(need: int) -> None:
    global _rows
    if need <= len(_rows):
        return
    new = np.zeros((max(need, 2 * len(_rows), 64), NFIELDS), np.uint64)
    new[:len(_rows)] = _rows
    _kept.append(_rows)
    _rows = new
    _header[0] = _rows.ctypes.data
    if _enabled:
        _header[1] = len(_rows)


def row_of(tex) -> np.ndarray:
    """The descriptor row of a Texture (F_OK 0 where the native path does not apply)."""
    r = np.zeros(NFIELDS, np.uint64)
    fmt = tex.fmt
    normalized = tex.normalized or tex.cubemap      # faces are read normalized (texture_layers.py)
    eff = tuple("clamp" if (m in ("wrap", "mirror") and not normalized) else m
                for m in tex.address)
    w, h, d = (int(x) for x in tex.dims)
    need = (d - 1) * tex.pitch * h + (h - 1) * tex.pitch + w * fmt.elem_bytes
    ok = (not (fmt.kind == "f" and fmt.bits != 32)
          and all(m in MODES for m in eff) and tex.filter in ("point", "linear")
          and tex.memory.dtype == np.uint8 and tex.memory.flags.c_contiguous
          and tex.memory.nbytes >= need > 0)
    r[F_BASE] = tex.memory.ctypes.data if tex.memory.nbytes else 0
    r[F_OK] = int(ok)
    r[F_KIND] = KINDS.index(fmt.kind)
    r[F_BITS], r[F_CH], r[F_EB] = fmt.bits, fmt.channels, fmt.elem_bytes
    r[F_W], r[F_H], r[F_D], r[F_PITCH] = w, h, d, tex.pitch
    r[F_LINEAR] = int(tex.linear)
    r[F_FILTER] = int(tex.filter == "linear")
    r[F_NORM] = int(tex.normalized)
    r[F_READN] = int(tex.read_normalized and fmt.bits < 32 and fmt.kind != "f")
    for k in range(3):
        r[F_MODE + k] = MODES.index(eff[k]) if eff[k] in MODES else 0
    border = np.array((list(tex.border) + [0.0] * 4)[:4], np.float64)
    r[F_BORDER:F_BORDER + 4] = border.view(np.uint64)
    r[F_RETF] = int(tex.returns_float())
    r[F_LAYERED] = int(tex.layered)
    r[F_CUBE] = int(tex.cubemap)
    return r


def surface_row(surf) -> np.ndarray:
    """The row of a Surface: F_OK 0 (no texture fetch), F_SURF 1 when its
    memory holds its dimensions."""
    r = np.zeros(NFIELDS, np.uint64)
    w, h, d = (int(x) for x in surf.dims)
    eb = surf.fmt.elem_bytes
    need = (d - 1) * surf.pitch * h + (h - 1) * surf.pitch + w * eb
    ok = (surf.memory.dtype == np.uint8 and surf.memory.flags.c_contiguous
          and surf.memory.nbytes >= need > 0)
    r[F_BASE] = surf.memory.ctypes.data if surf.memory.nbytes else 0
    r[F_EB], r[F_W], r[F_H], r[F_D], r[F_PITCH] = eb, w, h, d, surf.pitch
    r[F_SURF] = int(ok)
    r[F_LAYERED] = int(surf.layered)
    return r


def publish(obj) -> None:
    """Enter a registered texture or surface."""
    h = int(obj.handle)
    with _lock:
        _grow(h + 1)
        _rows[h] = row_of(obj) if hasattr(obj, "filter") else surface_row(obj)


def withdraw(handle: int) -> None:
    """A destroyed handle: its row is no longer OK."""
    with _lock:
        if 0 <= int(handle) < len(_rows):
            _rows[int(handle), F_OK] = 0
            _rows[int(handle), F_SURF] = 0


@contextlib.contextmanager
def disabled():
    """Run every fetch through the Python callback (tests compare both paths)."""
    global _enabled
    with _lock:
        _enabled = False
        _header[1] = 0
    try:
        yield
    finally:
        with _lock:
            _enabled = True
            _header[1] = len(_rows)


def symbols() -> dict:
    return {TABLE: _header}
