"""Which allocation an access's address started from (its provenance).

An executor address is ``segment << SHIFT | offset`` (backends/llvm/
layout.py): a buffer is a segment, and an offset that overflows its 32 (or,
with ``.address_size 32``, 24) bits carries into the *next* segment, another
buffer. Checking ``offset + size <= size(segment)`` alone would then let a
store 4 GiB past the end of buffer ``a`` write buffer ``b``. So every global
or generic access whose address derives from one kernel pointer parameter
(the pointer-provenance analysis of passes/slice_regions.py: arithmetic,
moves and conversions of one ``ld.param`` of a scalar pointer-wide
parameter) or from a ``.global`` variable must also lie in *that* segment:
the segment of the parameter's value, or segment 5 for the module's
``.global`` variables. A pointer of unknown origin (loaded from memory,
mixed from two parameters, returned by a call) is checked against the
segment it lands in only; docs/executor.md says so.

C and CUDA make an access outside the object a pointer was derived from
undefined behaviour (LLVM's ``inbounds``); on a GPU such an access faults or
corrupts another allocation, so ptxc reports it as out of bounds.
"""
from __future__ import annotations

from . import ir
from .memaccess import address_operand, state_space


def checked_address(ins):
    """(address operand, state space) of a global/generic access whose
    provenance is checked, or None."""
    if ins.opcode in ("ld", "ldu", "st", "atom", "red"):
        op, space = address_operand(ins), state_space(ins)
    elif ins.opcode == "cp" and len(ins.srcs) > 1:
        op, space = ins.srcs[1], "global"
    else:
        return None
    if space not in ("global", "generic") or not isinstance(op, ir.Addr):
        return None
    return op, space


def origins(ins, address_bits: int):
    """The objects the address of ``ins`` may derive from: a list of
    ('param', parameter) for scalar pointer-wide kernel parameters and
    ('globals',) for .global variables, or None when some base is unknown
    (a loaded pointer: not checked). At run time the address must lie in the
    segment of the one candidate whose value is a buffer pointer (a 64-bit
    index parameter, ``a + i`` with ``i`` from ``ld.param``, is a candidate
    too, but its value names no buffer); with none or several, it is not
    checked (provenance_ir.py)."""
    from ptxc.passes.slice_regions import UNKNOWN, UNKNOWN32
    got = checked_address(ins)
    fn = ins.block.function if ins.block is not None else None
    if got is None or fn is None or not fn.is_kernel or not isinstance(got[0].base, ir.Value):
        return None
    bases = regions(fn, address_bits).of(got[0].base)
    ptr_types = ("u64", "b64", "s64") if address_bits == 64 else ("u32", "b32", "s32")
    out = []
    for base in bases:
        if base == UNKNOWN32:
            continue
        if base == UNKNOWN:
            return None
        if base[0] == "param":
            p = next((p for p in fn.params if p.name == base[1]), None)
            if p is None or p.dims or p.type not in ptr_types:
                return None
            out.append(("param", p))
        elif base[0] == "sym" and getattr(base[1], "space", None) == "global":
            out.append(("globals",))
        else:
            return None
    return sorted(set(out), key=lambda o: o[1].name if len(o) > 1 else "") or None


def regions(fn, address_bits: int):
    """The pointer-provenance analysis of ``fn`` (cached on the function
    for the module's current IR)."""
    from ptxc.passes.cta_equivalence import module_program
    from ptxc.passes.slice_regions import Regions
    cache = fn.module.attrs.setdefault("provenance_regions", {})
    got = cache.get(fn.name)
    if got is None or got[0] is not fn:
        got = cache[fn.name] = (fn, Regions(fn, module_program(fn.module), address_bits))
    return got[1]


def started_from(plan, ins, addr: int, sizes: dict) -> str:
    """'; it was computed from <buffer>: N bytes after its end' when a
    reported address lies outside the allocation it started from (the
    provenance check failed), else ''."""
    shift = sizes.get("shift", plan.shift)
    cands = origins(ins, 32 if shift == 24 else 64)
    params = sizes.get("params")
    if not cands or params is None:
        return ""
    segs = []
    for cand in cands:
        if cand[0] == "globals":
            segs.append(5)
            continue
        off, width = plan.param_layout[cand[1].name][1], 8 if shift == 32 else 4
        seg = int.from_bytes(params[off:off + width], "little") >> shift
        if seg >= 5:
            segs.append(seg)
    if len(segs) != 1 or segs[0] == addr >> shift:
        return ""
    seg = segs[0]
    name, n = sizes.get("buffers", {}).get(seg, (".global variables", plan.global_size)) \
        if seg != 5 else ("the .global variables", plan.global_size)
    base = seg << shift
    where = f"{base - addr} bytes before" if addr < base else f"{addr - base - n} bytes after the end of"
    return (f"; it was computed from {name} ({n} bytes at 0x{base:x}) and lies {where} it "
            f"(an offset never carries into another allocation)")
