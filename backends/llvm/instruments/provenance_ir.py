"""Code generation of the provenance check (passes/memory/provenance.py).

A global or generic access whose address derives from kernel pointer
parameters, ``.global`` variables or pointers loaded from memory (its
*candidates*, passes/memory/provenance_flow.py) must lie, in every executing lane,
in the segment of the one candidate whose value is a buffer pointer in that
lane (segment >= 5 and in the segment table; 5 for the variables): an offset
that overflowed into the next segment is then reported as an out-of-bounds
access, like an offset past the end of the segment (the lanes join
ptxc_resolve's out-of-bounds mask). With no such candidate, or several
(``a + (b - a)``), the lane is checked against the segment it lands in only.

Parameter and variable candidates are the same for every lane (scalar code,
as before loaded pointers were checked). A loaded candidate is the value
its load gave in this lane: the load stores the segment that value points
into (0 when it is no buffer pointer), for the active lanes, into a *shadow
slot* of its own (``keep_root``, called after the load's lowering), because
the register may hold another value by the time the access runs, and an
access is usually executed more often than the load of its pointer. The
slot's offset in the warp state is recorded in ``plan.provenance_shadow``
so that an error message can read the failing lane's segment
(ptxc/launcher/provenance_message.py).
"""
from __future__ import annotations

from ptxc.passes.memory.provenance import loaded_roots, origins

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import splat
from ptxc.backends.llvm.plan import Slot


def address_bits(cg) -> int:
    return 32 if cg.plan.shift == 24 else 64


def expected_segment(cg):
    """(segment, enabled, uniform): LLVM values, i64 and i1 when every
    candidate is uniform, else <32 x i64> and <32 x i1>; None when the
    current instruction's provenance is not checked."""
    cands = candidates(cg)
    if cands is None:
        return None
    f = cg.f
    fixed = [c for c in cands if c[0] != "loaded"]
    loaded = [cg.load_slot(shadow_slot(cg, c[1])) for c in cands if c[0] == "loaded"]
    seg, count = "0", "0"
    for cand in fixed:
        s, is_ptr = candidate_segment(cg, cand, f.cast("zext", "i32", cg.nsegs, "i64"))
        seg = f.val(f"select i1 {is_ptr}, i64 {s}, i64 {seg}")
        count = f.val(f"add i64 {count}, {f.cast('zext', 'i1', is_ptr, 'i64')}")
    if not loaded:
        return seg, f.icmp("eq", "i64", count, "1"), True
    zero = "zeroinitializer"
    if len(loaded) == 1 and not fixed:          # one loaded pointer: its segment, if any
        return loaded[0], f.val(f"icmp ne <32 x i64> {loaded[0]}, {zero}"), False
    seg, count = cg.bcast(seg, "i64"), cg.bcast(count, "i64")
    for s in loaded:                            # shadows hold a segment or 0 (keep_root)
        has = f.val(f"icmp ne <32 x i64> {s}, {zero}")
        seg = f.val(f"select <32 x i1> {has}, <32 x i64> {s}, <32 x i64> {seg}")
        count = f.val(f"add <32 x i64> {count}, {f.cast('zext', '<32 x i1>', has, '<32 x i64>')}")
    return seg, f.val(f"icmp eq <32 x i64> {count}, {splat('i64', 1)}"), False


def candidates(cg):
    """The provenance candidates of the current instruction's address, or
    None when its provenance is not checked (none, or a loaded one whose
    load is not kept)."""
    cands = origins(cg.cur, address_bits(cg))
    if not cands or any(c[0] == "loaded" and not cg.keep(c[1].instr) for c in cands):
        return None
    return cands


def candidate_segment(cg, cand, nsegs: str):
    """(segment, is a buffer pointer) of a parameter or variables candidate."""
    f = cg.f
    if cand[0] == "globals":
        return str(Lo.SEG_GLOBALS), "true"
    off = cg.plan.param_layout[cand[1].name][1] + cand[2]
    t = "i64" if cg.plan.shift == 32 else "i32"
    value = f.load(t, f.gep(cg.params, off), 1)
    if t == "i32":
        value = f.cast("zext", "i32", value, "i64")
    s = f.val(f"lshr i64 {value}, {cg.plan.shift}")
    low = f.icmp("uge", "i64", s, str(Lo.SEG_GLOBALS))
    return s, f.val(f"and i1 {low}, {f.icmp('ult', 'i64', s, nsegs)}")


def with_provenance(cg, r: str, addr: str) -> str:
    """``r`` (ptxc_resolve's failed lanes) plus the executing lanes whose
    address ``addr`` (<32 x i64>) lies outside the segment it started from.
    An out-of-line per-lane arm (slow_access.py) has the caller's
    expectation as its arguments (``provenance_args``; False: none)."""
    given = getattr(cg, "provenance_args", None)
    got = expected_segment(cg) if given is None else (given or None)
    if got is None:
        return r
    seg, enabled, uniform = got
    f = cg.f
    lanes = f.val(f"lshr <32 x i64> {addr}, {splat('i64', cg.plan.shift)}")
    other = f.val(f"icmp ne <32 x i64> {lanes}, {cg.bcast(seg, 'i64') if uniform else seg}")
    other = f.val(f"and <32 x i1> {other}, {cg.em}")
    if not uniform:
        other = f.val(f"and <32 x i1> {other}, {enabled}")
    bits = f.cast("bitcast", "<32 x i1>", other, "i32")
    if uniform:
        bits = f.val(f"select i1 {enabled}, i32 {bits}, i32 0")
    return f.val(f"or i64 {r}, {f.cast('zext', 'i32', bits, 'i64')}")


def keep_root(cg, ins) -> None:
    """After a kept load: for each result a provenance check reads, store
    the segment its value points into (0 when it is not a buffer pointer:
    segment >= 5 and in the table) into its shadow slot, for the active
    lanes (the others keep their own last value)."""
    if ins.opcode not in ("ld", "ldu") or ins.block is None:
        return
    roots = loaded_roots(ins.block.function, address_bits(cg))
    if not roots:
        return
    f = cg.f
    for res in ins.results:
        if id(res) not in roots:
            continue
        s = f.val(f"lshr <32 x i64> {cg.read(res, 'u64')}, {splat('i64', cg.plan.shift)}")
        hi = cg.bcast(f.cast("zext", "i32", cg.nsegs, "i64"), "i64")
        low = f.val(f"icmp uge <32 x i64> {s}, {splat('i64', Lo.SEG_GLOBALS)}")
        ok = f.val(f"and <32 x i1> {low}, {f.val(f'icmp ult <32 x i64> {s}, {hi}')}")
        s = f.val(f"select <32 x i1> {ok}, <32 x i64> {s}, <32 x i64> zeroinitializer")
        cg._masked_store(shadow_slot(cg, res), s, "u64", cg.mv)


def shadow_slot(cg, res) -> Slot:
    """The shadow slot of load result ``res`` in the current instance
    (created, zeroed at warp start and recorded on first use)."""
    plan = cg.plan
    key = ("provenance", cg.inst.id, id(res))
    s = plan.slots.get(key)
    if s is None:
        s = plan.slots[key] = Slot(len(plan.slots), "u64", 64)
        plan.slot_list.append(s)
        cg.zero_slots.append(s)
    if not hasattr(plan, "provenance_shadow"):
        plan.provenance_shadow = {}
    cg.slot_ptr(s)
    plan.provenance_shadow[(cg.inst.id, id(res))] = cg.slot_offsets[s.index]
    return s
