"""The provenance part of an out-of-bounds message (passes/memory/provenance.py).

When the executor stops at an access that left the allocation its address
started from, the message says which allocation that was and how far the
address is from it: '; it was computed from buffer of parameter a (16 bytes
at 0x600000000) and lies 4294967280 bytes after the end of it'. For a
pointer loaded from memory it also names the load's PTX line; the segment
its value points into is read from the shadow slot of the failing lane
(backends/llvm/instruments/provenance_ir.py keeps it there): in the warp state the error
left (``ws`` and ``lane``), or, in a memcheck run, as the callback saw it at
the first occurrence (``shadow``, backends/llvm/instruments/memcheck.py). Without it the
message names the load alone, and only when the address lies inside an
allocation (so that only the provenance check can have failed).
"""
from __future__ import annotations

from ptxc.passes.memory.provenance import origins

TAIL = "(an offset never carries into another allocation)"


def started_from(plan, inst, ins, addr: int, sizes: dict, ws=None, lane=None, shadow=None) -> str:
    """'; it was computed from <buffer> ... and lies N bytes after the end
    of it' when ``addr`` lies outside the allocation it started from (the
    provenance check failed), else ''."""
    shift = sizes.get("shift", plan.shift)
    cands = origins(ins, 32 if shift == 24 else 64)
    if not cands:
        return ""
    found, unread = [], []
    for cand in cands:
        seg = _segment(plan, inst, cand, sizes, shift, ws, lane, shadow)
        if seg is None and cand[0] == "loaded":
            unread.append(cand)
        elif seg is not None and (seg == 5 or seg in sizes.get("buffers", {})):
            found.append((seg, cand))
    if unread:
        return _unread(unread + [c for _, c in found], addr, sizes, shift)
    if len(found) != 1 or found[0][0] == addr >> shift:
        return ""
    seg, cand = found[0]
    name, n = sizes.get("buffers", {}).get(seg, ("", 0)) if seg != 5 \
        else ("the .global variables", plan.global_size)
    base = seg << shift
    where = f"{base - addr} bytes before" if addr < base else f"{addr - base - n} bytes after the end of"
    source = f"{name} ({n} bytes at 0x{base:x})"
    if cand[0] == "loaded":
        source = f"the pointer loaded at line {_line(cand)}, which points into {source},"
    return f"; it was computed from {source} and lies {where} it {TAIL}"


def _segment(plan, inst, cand, sizes: dict, shift: int, ws, lane, shadow):
    """The segment candidate ``cand``'s value points into, or None (unknown)."""
    width = 8 if shift == 32 else 4
    if cand[0] == "globals":
        return 5
    if cand[0] == "param":
        params = sizes.get("params")
        if params is None or cand[1].name not in plan.param_layout:
            return None
        off = plan.param_layout[cand[1].name][1] + cand[2]
        return int.from_bytes(params[off:off + width], "little") >> shift
    at = getattr(plan, "provenance_shadow", {}).get((inst.id, id(cand[1])))
    if at is not None and shadow is not None and at in shadow:
        return shadow[at]
    if ws is None or lane is None or at is None:
        return None
    return int.from_bytes(ws[at + 8 * lane:at + 8 * lane + 8], "little")   # a segment (or 0)


def _unread(cands, addr: int, sizes: dict, shift: int) -> str:
    """The message when a loaded pointer's value is not known."""
    seg, off = addr >> shift, addr & ((1 << shift) - 1)
    inside = seg in sizes.get("buffers", {}) and off < sizes["buffers"][seg][1]
    if not inside:
        return ""
    lines = " or ".join(f"the pointer loaded at line {_line(c)}" if c[0] == "loaded" else
                        (f"parameter {c[1].name}" if c[0] == "param" else "the .global variables")
                        for c in cands)
    return f"; it was computed from {lines} and lies outside the allocation that pointer points into {TAIL}"


def _line(cand) -> str:
    loc = cand[1].instr.loc
    return str(loc.line) if loc is not None else "?"
