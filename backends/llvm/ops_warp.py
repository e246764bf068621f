"""Warp collectives and CTA barrier reductions (PTX ISA 9.7.8.6, 9.7.13).

A collective sees exactly the executing lanes (active mask, guard and, for
the ``.sync`` forms, the member mask): METRICS.md "Warp-wide instructions".
``shfl`` follows the ISA pseudocode (segment mask and clamp in ``c``); a
source lane that is not executing gives the value its register holds.
"""
from __future__ import annotations

from ptxc import ir

from . import layout as Lo
from .irtext import LANE_IDS, splat
from .ops_common import intr, itype, types_of
from .values import lty


def K(v) -> str:
    return splat("i32", v)


def members(cg, ins, op_index: int | None) -> str:
    """Executing lanes (i32) intersected with the member mask operand, if any."""
    m = cg.emi
    if op_index is not None and op_index < len(ins.srcs) and "sync" in ins.mods:
        mm = ins.srcs[op_index]
        if isinstance(mm, ir.Imm):
            return cg.f.val(f"and i32 {m}, {mm.value & 0xFFFFFFFF}") if (mm.value & 0xFFFFFFFF) != 0xFFFFFFFF else m
        v = cg.read(mm, "b32")
        first = cg.f.val(f"extractelement <32 x i32> {v}, i32 {first_lane(cg, m)}")
        return cg.f.val(f"and i32 {m}, {first}")
    return m


def first_lane(cg, m: str) -> str:
    return intr(cg, "llvm.cttz.i32", "i32", [("i32", m), ("i1", "true")])


def uniform(cg, v: str, t: str) -> str:
    return cg.bcast(v, t)


def permute(cg, vec: str, lt: str, idx: str) -> str:
    """result[l] = vec[idx[l]] (idx in 0..31)."""
    f = cg.f
    arr = f.alloca(f"[32 x {lt}]", "perm", 64)
    f.store(f"<32 x {lt}>", vec, arr, 64)
    ptrs = f.val(f"getelementptr {lt}, ptr {arr}, <32 x i32> {idx}")
    return intr(cg, f"llvm.masked.gather.v32{'f32' if lt == 'float' else lt}.v32p0", f"<32 x {lt}>",
                [("<32 x ptr>", ptrs), ("i32", "4"), ("<32 x i1>", splat("i1", "true")),
                 (f"<32 x {lt}>", "zeroinitializer")])


# --------------------------------------------------------------- shfl
def op_shfl(cg, ins):
    f = cg.f
    t = itype(ins)
    mode = next(m for m in ins.mods if m in ("up", "down", "bfly", "idx"))
    a = cg.read(ins.srcs[0], "b32")
    b = f.val(f"and <32 x i32> {cg.read(ins.srcs[1], 'u32')}, {K(31)}")
    c = cg.read(ins.srcs[2], "u32") if len(ins.srcs) > 2 else K(0x1F)
    lane = LANE_IDS
    seg = f.val(f"and <32 x i32> {f.val(f'lshr <32 x i32> {c}, {K(8)}')}, {K(31)}")
    nseg = f.val(f"xor <32 x i32> {seg}, {K(-1)}")
    low = f.val(f"and <32 x i32> {lane}, {seg}")
    clamp = f.val(f"and <32 x i32> {c}, {K(31)}")
    maxl = f.val(f"or <32 x i32> {low}, {f.val(f'and <32 x i32> {clamp}, {nseg}')}")
    if mode == "up":
        j = f.val(f"sub <32 x i32> {lane}, {b}")
        ok = f.val(f"icmp sge <32 x i32> {j}, {maxl}")
    elif mode == "down":
        j = f.val(f"add <32 x i32> {lane}, {b}")
        ok = f.val(f"icmp sle <32 x i32> {j}, {maxl}")
    elif mode == "bfly":
        j = f.val(f"xor <32 x i32> {lane}, {b}")
        ok = f.val(f"icmp sle <32 x i32> {j}, {maxl}")
    else:
        j = f.val(f"or <32 x i32> {low}, {f.val(f'and <32 x i32> {b}, {nseg}')}")
        ok = f.val(f"icmp sle <32 x i32> {j}, {maxl}")
    j = f.val(f"select <32 x i1> {ok}, <32 x i32> {j}, <32 x i32> {lane}")
    j = f.val(f"and <32 x i32> {j}, {K(31)}")
    d = permute(cg, a, "i32", j)
    dsts = cg.dst_list(ins)
    cg.write(dsts[0], d, "b32" if t != "f32" else "b32")
    if len(dsts) > 1:
        cg.write(dsts[1], ok, "pred")


# --------------------------------------------------------------- vote
def op_vote(cg, ins):
    f = cg.f
    mode = next(m for m in ins.mods if m in ("all", "any", "uni", "ballot"))
    act = members(cg, ins, 1)
    p = cg.read(ins.srcs[0], "pred")
    pi = f.cast("bitcast", "<32 x i1>", p, "i32")
    yes = f.val(f"and i32 {pi}, {act}")
    if mode == "ballot":
        return cg.write(ins.results[0], uniform(cg, yes, "i32"), "b32")
    if mode == "all":
        r = f.icmp("eq", "i32", yes, act)
    elif mode == "any":
        r = f.icmp("ne", "i32", yes, "0")
    else:
        r = f.val(f"or i1 {f.icmp('eq', 'i32', yes, act)}, {f.icmp('eq', 'i32', yes, '0')}")
    cg.write(ins.results[0], uniform(cg, r, "i1"), "pred")


def op_activemask(cg, ins):
    cg.write(ins.results[0], uniform(cg, cg.emi, "i32"), "b32")


def op_match(cg, ins):
    f = cg.f
    t = itype(ins)
    lt = lty(t)
    act = members(cg, ins, 1)
    a = cg.read(ins.srcs[0], t)
    acc = "zeroinitializer"
    for k in range(32):
        ak = f.val(f"extractelement <32 x {lt}> {a}, i32 {k}")
        eq = f.val(f"icmp eq <32 x {lt}> {a}, {uniform(cg, ak, lt)}")
        bit = -0x80000000 if k == 31 else 1 << k
        hit = f.val(f"select <32 x i1> {eq}, <32 x i32> {K(bit)}, <32 x i32> zeroinitializer")
        acc = f.val(f"or <32 x i32> {acc}, {hit}")
    acc = f.val(f"and <32 x i32> {acc}, {uniform(cg, act, 'i32')}")
    dsts = cg.dst_list(ins)
    if "any" in ins.mods:
        return cg.write(dsts[0], acc, "b32")
    same = f.val(f"icmp eq <32 x i32> {acc}, {uniform(cg, act, 'i32')}")
    idle = f.val(f"xor <32 x i1> {cg.em}, {splat('i1', 'true')}")
    same = f.val(f"or <32 x i1> {same}, {idle}")
    allsame = intr(cg, "llvm.vector.reduce.and.v32i1", "i1", [("<32 x i1>", same)])
    r = f.val(f"select i1 {allsame}, i32 {act}, i32 0")
    cg.write(dsts[0], uniform(cg, r, "i32"), "b32")
    if len(dsts) > 1:
        cg.write(dsts[1], uniform(cg, allsame, "i1"), "pred")


REDUX_ID = {"add": 0, "and": -1, "or": 0, "xor": 0}


def op_redux(cg, ins):
    f = cg.f
    ts = types_of(ins)
    t = ts[-1] if ts else "b32"
    op = next(m for m in ins.mods if m in ("add", "min", "max", "and", "or", "xor"))
    if t not in ("u32", "s32", "b32"):
        return cg.unsupported(ins)
    act = members(cg, ins, 1)
    a = cg.read(ins.srcs[0], t)
    s = "s" if t == "s32" else "u"
    if op in REDUX_ID:
        ident, name = REDUX_ID[op], op
    elif op == "min":
        ident, name = (0x7FFFFFFF if s == "s" else -1), s + "min"
    else:
        ident, name = (-0x80000000 if s == "s" else 0), s + "max"
    mv = f.cast("bitcast", "i32", act, "<32 x i1>")
    x = f.val(f"select <32 x i1> {mv}, <32 x i32> {a}, <32 x i32> {K(ident)}")
    r = intr(cg, f"llvm.vector.reduce.{name}.v32i32", "i32", [("<32 x i32>", x)])
    cg.write(ins.results[0], uniform(cg, r, "i32"), t)


def op_elect(cg, ins):
    f = cg.f
    act = members(cg, ins, 0)
    first = first_lane(cg, act)
    dsts = cg.dst_list(ins)
    if dsts and dsts[0] is not None:
        cg.write(dsts[0], uniform(cg, first, "i32"), "b32")
    if len(dsts) > 1:
        me = f.val(f"icmp eq <32 x i32> {LANE_IDS}, {uniform(cg, first, 'i32')}")
        cg.write(dsts[1], me, "pred")


def op_nop(cg, ins):
    return None


# ----------------------------------------------------- bar.red support
def barrier_arrive(cg, ins) -> None:
    """bar.red: add this warp's contribution to the CTA accumulators."""
    if "red" not in ins.mods:
        return
    f = cg.f
    pred_op = ins.srcs[-1]
    p = cg.read(pred_op, "pred")
    pi = f.cast("bitcast", "<32 x i1>", p, "i32")
    yes = f.val(f"and i32 {pi}, {cg.emi}")
    if "popc" in ins.mods:
        cnt = intr(cg, "llvm.ctpop.i32", "i32", [("i32", yes)])
        ptr = f.gep("%cta", Lo.CTA_RED_POPC)
        f.store("i32", f.val(f"add i32 {f.load('i32', ptr, 4)}, {cnt}"), ptr, 4)
    elif "and" in ins.mods:
        ptr = f.gep("%cta", Lo.CTA_RED_AND)
        ok = f.cast("zext", "i1", f.icmp("eq", "i32", yes, cg.emi), "i32")
        f.store("i32", f.val(f"and i32 {f.load('i32', ptr, 4)}, {ok}"), ptr, 4)
    else:
        ptr = f.gep("%cta", Lo.CTA_RED_OR)
        ok = f.cast("zext", "i1", f.icmp("ne", "i32", yes, "0"), "i32")
        f.store("i32", f.val(f"or i32 {f.load('i32', ptr, 4)}, {ok}"), ptr, 4)


def barrier_resume(cg, ins) -> None:
    """bar.red: the CTA-wide result, after the barrier released."""
    if "red" not in ins.mods or not ins.results:
        return
    f = cg.f
    if "popc" in ins.mods:
        v = f.field("i32", "%cta", Lo.CTA_RES_POPC)
        return cg.write(ins.results[0], uniform(cg, v, "i32"), "u32")
    off = Lo.CTA_RES_AND if "and" in ins.mods else Lo.CTA_RES_OR
    v = f.icmp("ne", "i32", f.field("i32", "%cta", off), "0")
    cg.write(ins.results[0], uniform(cg, v, "i1"), "pred")


OPS = {"shfl": op_shfl, "vote": op_vote, "activemask": op_activemask, "match": op_match,
       "redux": op_redux, "elect": op_elect}
