"""Code generation of the provenance check (ptxc/provenance.py).

A global or generic access whose address derives from kernel pointer
parameters or ``.global`` variables (its *candidates*) must lie in the
segment of the one candidate whose value is a buffer pointer at run time
(segment >= 5 and in the segment table; 5 for the variables): an offset that
overflowed into the next segment is then reported as an out-of-bounds
access, like an offset past the end of the segment (the lanes join
ptxc_resolve's out-of-bounds mask). With no such candidate, or several
(``a + (b - a)``), the access is checked against the segment it lands in
only.
"""
from __future__ import annotations

from ptxc.provenance import origins

from . import layout as Lo
from .irtext import splat


def expected_segment(cg):
    """(segment, enabled): uniform i64 and i1 LLVM values, or None when the
    current instruction's provenance is not checked."""
    if cg.inst is not cg.plan.root:
        return None
    cands = origins(cg.cur, 32 if cg.plan.shift == 24 else 64)
    if not cands:
        return None
    f = cg.f
    seg, count = "0", "0"
    nsegs = f.cast("zext", "i32", cg.nsegs, "i64")
    for cand in cands:
        s, is_ptr = candidate_segment(cg, cand, nsegs)
        seg = f.val(f"select i1 {is_ptr}, i64 {s}, i64 {seg}")
        count = f.val(f"add i64 {count}, {f.cast('zext', 'i1', is_ptr, 'i64')}")
    return seg, f.icmp("eq", "i64", count, "1")


def candidate_segment(cg, cand, nsegs: str):
    """(segment, is a buffer pointer) of one candidate."""
    f = cg.f
    if cand[0] == "globals":
        return str(Lo.SEG_GLOBALS), "true"
    off = cg.plan.param_layout[cand[1].name][1]
    t = "i64" if cg.plan.shift == 32 else "i32"
    value = f.load(t, f.gep(cg.params, off), 1)
    if t == "i32":
        value = f.cast("zext", "i32", value, "i64")
    s = f.val(f"lshr i64 {value}, {cg.plan.shift}")
    low = f.icmp("uge", "i64", s, str(Lo.SEG_GLOBALS))
    return s, f.val(f"and i1 {low}, {f.icmp('ult', 'i64', s, nsegs)}")


def with_provenance(cg, r: str, addr: str) -> str:
    """``r`` (ptxc_resolve's failed lanes) plus the executing lanes whose
    address ``addr`` (<32 x i64>) lies outside the segment it started from."""
    got = expected_segment(cg)
    if got is None:
        return r
    seg, enabled = got
    f = cg.f
    lanes = f.val(f"lshr <32 x i64> {addr}, {splat('i64', cg.plan.shift)}")
    other = f.val(f"icmp ne <32 x i64> {lanes}, {cg.bcast(seg, 'i64')}")
    other = f.val(f"and <32 x i1> {other}, {cg.em}")
    bits = f.cast("bitcast", "<32 x i1>", other, "i32")
    bits = f.val(f"select i1 {enabled}, i32 {bits}, i32 0")
    return f.val(f"or i64 {r}, {f.cast('zext', 'i32', bits, 'i64')}")
