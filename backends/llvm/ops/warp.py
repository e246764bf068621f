"""Warp collectives, ``fns`` and CTA barrier reductions (PTX ISA 9.x:
9.7.9.6 shfl.sync, 9.7.15.2 bar.warp.sync, 9.7.15.10 vote.sync, 9.7.15.11
match.sync, 9.7.15.12 activemask, 9.7.15.13 redux.sync, elect.sync, fns,
9.7.15.1 bar.red).

The warp model (docs/metrics.md, "Execution model"; docs/executor.md, "Warp
collectives"): the *executing* lanes of an instruction are the active,
non-exited lanes whose guard is true. Each lane computes its result over its
own members, ``membermask[l] & executing`` (the member masks of the lanes of
one converged ``.sync`` instruction may differ: cooperative groups'
``labeled_partition`` passes each lane its own group's mask). The forms
without a member mask use the executing lanes. Where the ISA leaves a result
undefined ptxc is deterministic: a lane whose mask leaves itself out still
reduces over its (possibly empty) members; a ``shfl`` source lane that is not
executing gives the value its register holds; ``bar.warp.sync`` waits for
nothing (the lanes of one IPDOM path run in lock step).
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import LANE_IDS, splat
from ptxc.backends.llvm.ops.common import intr, itype, types_of
from ptxc.backends.llvm.values import lty
from ptxc.backends.llvm.ops.warp_ir import match_helper, redux_helper

V = "<32 x i32>"


def K(v) -> str:
    return splat("i32", v)


def members(cg, ins, op_index: int | None) -> str:
    """<32 x i32>: lane l's members, its member mask (operand ``op_index`` of
    a ``.sync`` form) intersected with the executing lanes."""
    executing = uniform(cg, cg.emi, "i32")
    if op_index is None or op_index >= len(ins.srcs) or "sync" not in ins.mods:
        return executing
    mm = ins.srcs[op_index]
    if isinstance(mm, ir.Imm) and (mm.value & 0xFFFFFFFF) == 0xFFFFFFFF:
        return executing
    return cg.f.val(f"and {V} {cg.read(mm, 'b32')}, {executing}")


def uniform(cg, v: str, t: str) -> str:
    return cg.bcast(v, t)


def lowest(cg, m: str) -> str:
    """Per lane: the lowest lane of set ``m`` (32 when empty)."""
    return intr(cg, "llvm.cttz.v32i32", V, [(V, m), ("i1", "false")])


def use_helper(cg, name: str, text: str, decls=()) -> str:
    cg.helpers.setdefault(name, text)
    cg.decls.update(decls)
    return name


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
    """The ISA pseudocode; the member mask does not change the result (a
    source outside it is undefined in the ISA and gives its register here)."""
    f = cg.f
    mode = next(m for m in ins.mods if m in ("up", "down", "bfly", "idx"))
    a = cg.read(ins.srcs[0], "b32")
    b = f.val(f"and {V} {cg.read(ins.srcs[1], 'u32')}, {K(31)}")
    c = cg.read(ins.srcs[2], "u32") if len(ins.srcs) > 2 else K(0x1F)
    lane = LANE_IDS
    seg = f.val(f"and {V} {f.val(f'lshr {V} {c}, {K(8)}')}, {K(31)}")
    nseg = f.val(f"xor {V} {seg}, {K(-1)}")
    low = f.val(f"and {V} {lane}, {seg}")
    clamp = f.val(f"and {V} {c}, {K(31)}")
    maxl = f.val(f"or {V} {low}, {f.val(f'and {V} {clamp}, {nseg}')}")
    if mode == "up":
        j = f.val(f"sub {V} {lane}, {b}")
        ok = f.val(f"icmp sge {V} {j}, {maxl}")
    elif mode == "down":
        j = f.val(f"add {V} {lane}, {b}")
        ok = f.val(f"icmp sle {V} {j}, {maxl}")
    elif mode == "bfly":
        j = f.val(f"xor {V} {lane}, {b}")
        ok = f.val(f"icmp sle {V} {j}, {maxl}")
    else:
        j = f.val(f"or {V} {low}, {f.val(f'and {V} {b}, {nseg}')}")
        ok = f.val(f"icmp sle {V} {j}, {maxl}")
    j = f.val(f"select <32 x i1> {ok}, {V} {j}, {V} {lane}")
    j = f.val(f"and {V} {j}, {K(31)}")
    d = permute(cg, a, "i32", j)
    dsts = cg.dst_list(ins)
    if dsts[0] is not None:
        cg.write(dsts[0], d, "b32")
    if len(dsts) > 1 and dsts[1] is not None:
        cg.write(dsts[1], ok, "pred")


# --------------------------------------------------------------- vote
def op_vote(cg, ins):
    """Per lane l with members M[l]: ballot = pred & M[l]; all: pred holds on
    all of M[l]; any: on some; uni: on all or none (an empty M[l] gives 0,
    all = uni = true, any = false)."""
    f = cg.f
    mode = next(m for m in ins.mods if m in ("all", "any", "uni", "ballot"))
    m = members(cg, ins, 1)
    p = cg.read(ins.srcs[0], "pred")
    pi = uniform(cg, f.cast("bitcast", "<32 x i1>", p, "i32"), "i32")
    yes = f.val(f"and {V} {pi}, {m}")
    if mode == "ballot":
        return cg.write(ins.results[0], yes, "b32")
    if mode == "all":
        r = f.val(f"icmp eq {V} {yes}, {m}")
    elif mode == "any":
        r = f.val(f"icmp ne {V} {yes}, zeroinitializer")
    else:
        r = f.val(f"or <32 x i1> {f.val(f'icmp eq {V} {yes}, {m}')}, "
                  f"{f.val(f'icmp eq {V} {yes}, zeroinitializer')}")
    cg.write(ins.results[0], r, "pred")


def op_activemask(cg, ins):
    cg.write(ins.results[0], uniform(cg, cg.emi, "i32"), "b32")


def op_match(cg, ins):
    """match.any: d[l] = { k in M[l] : a[k] == a[l] }. match.all: d[l] = M[l]
    and p[l] = true when every member holds the value of the lowest member,
    else d[l] = 0 and p[l] = false (an empty M[l]: d = 0, p = true)."""
    f = cg.f
    lt = lty(itype(ins))
    vt = f"<32 x {lt}>"
    m = members(cg, ins, 1)
    a = cg.read(ins.srcs[0], itype(ins))
    eq = use_helper(cg, *match_helper(lt))
    dsts = cg.dst_list(ins)
    if "any" in ins.mods:
        same = f.call(V, eq, [(vt, a), (vt, a)])
        return cg.write(dsts[0], f.val(f"and {V} {same}, {m}"), "b32")
    empty = f.val(f"icmp eq {V} {m}, zeroinitializer")
    first = f.val(f"select <32 x i1> {empty}, {V} {LANE_IDS}, {V} {lowest(cg, m)}")
    v = permute(cg, a, lt, first)
    same = f.val(f"and {V} {f.call(V, eq, [(vt, a), (vt, v)])}, {m}")
    ok = f.val(f"icmp eq {V} {same}, {m}")
    if dsts[0] is not None:
        cg.write(dsts[0], f.val(f"select <32 x i1> {ok}, {V} {m}, {V} zeroinitializer"), "b32")
    if len(dsts) > 1 and dsts[1] is not None:
        cg.write(dsts[1], ok, "pred")


REDUX_TYPES = {"add": ("u32", "s32"), "min": ("u32", "s32"), "max": ("u32", "s32"),
               "and": ("b32",), "or": ("b32",), "xor": ("b32",)}


def op_redux(cg, ins):
    """redux.sync.op.type d, a, membermask: d[l] = op over a[k], k in M[l]
    (.add wraps to 32 bits; an empty M[l] gives op's identity)."""
    ts = types_of(ins)
    t = ts[-1] if ts else "b32"
    op = next((m for m in ins.mods if m in REDUX_TYPES), None)
    if op is None or t not in REDUX_TYPES[op] or {"abs", "NaN"} & set(ins.mods):
        return cg.unsupported(ins, f"{ins.full_opcode} (ptxc runs redux.sync add/min/max on "
                                   f"u32/s32 and and/or/xor on b32; not the sm_100a f32 forms)")
    name = op if op not in ("min", "max") else ("s" if t == "s32" else "u") + op
    fn = use_helper(cg, *redux_helper(name))
    r = cg.f.call(V, fn, [(V, cg.read(ins.srcs[0], t)), (V, members(cg, ins, 1))])
    cg.write(ins.results[0], r, t)


def op_elect(cg, ins):
    """elect.sync d|p, membermask: the leader of lane l is its lowest member;
    p is true on the leader (an empty M[l]: d = 0xffffffff, p = false)."""
    f = cg.f
    m = members(cg, ins, 0)
    first = lowest(cg, m)
    empty = f.val(f"icmp eq {V} {m}, zeroinitializer")
    dsts = cg.dst_list(ins)
    if dsts and dsts[0] is not None:
        cg.write(dsts[0], f.val(f"select <32 x i1> {empty}, {V} {K(-1)}, {V} {first}"), "b32")
    if len(dsts) > 1 and dsts[1] is not None:
        cg.write(dsts[1], f.val(f"icmp eq {V} {LANE_IDS}, {first}"), "pred")


# ---------------------------------------------------------------- fns
def nth_set_bit(cg, m: str, n: str) -> str:
    """Per lane: the position of the n-th (1-based) set bit of m counting from
    bit 0, by a binary search on population counts (valid if 1 <= n <= popc)."""
    f = cg.f
    pos, r = "zeroinitializer", n
    for w in (16, 8, 4, 2, 1):
        window = f.val(f"and {V} {f.val(f'lshr {V} {m}, {pos}')}, {K((1 << w) - 1)}")
        low = intr(cg, "llvm.ctpop.v32i32", V, [(V, window)])
        up = f.val(f"icmp ugt {V} {r}, {low}")
        r = f.val(f"select <32 x i1> {up}, {V} {f.val(f'sub {V} {r}, {low}')}, {V} {r}")
        pos = f.val(f"select <32 x i1> {up}, {V} {f.val(f'add {V} {pos}, {K(w)}')}, {V} {pos}")
    return pos


def op_fns(cg, ins):
    """fns.b32 d, mask, base, offset (PTX ISA 9.x, "Integer Arithmetic
    Instructions: fns"): the |offset|-th set bit of mask at or above base
    (offset > 0) or at or below it (offset < 0); offset 0: base if bit base is
    set. 0xffffffff when there is none, and for base > 31 (undefined in the
    ISA; its search loop would not run)."""
    f = cg.f
    mask = cg.read(ins.srcs[0], "b32")
    base = cg.read(ins.srcs[1], "u32")
    off = cg.read(ins.srcs[2], "s32")
    b = f.val(f"and {V} {base}, {K(31)}")
    above = f.val(f"and {V} {mask}, {f.val(f'shl {V} {K(-1)}, {b}')}")
    upto = f.val(f"shl {V} {K(2)}, {b}")          # bits 0..base: (2 << base) - 1
    below = f.val(f"and {V} {mask}, {f.val(f'sub {V} {upto}, {K(1)}')}")
    down = f.val(f"icmp slt {V} {off}, zeroinitializer")
    below_r = intr(cg, "llvm.bitreverse.v32i32", V, [(V, below)])
    src = f.val(f"select <32 x i1> {down}, {V} {below_r}, {V} {above}")
    n = f.val(f"select <32 x i1> {down}, {V} {f.val(f'sub {V} zeroinitializer, {off}')}, {V} {off}")
    pos = nth_set_bit(cg, src, n)
    pos = f.val(f"select <32 x i1> {down}, {V} {f.val(f'sub {V} {K(31)}, {pos}')}, {V} {pos}")
    popc = intr(cg, "llvm.ctpop.v32i32", V, [(V, src)])
    found = f.val(f"icmp ule {V} {n}, {popc}")
    r = f.val(f"select <32 x i1> {found}, {V} {pos}, {V} {K(-1)}")
    bit = f.val(f"and {V} {f.val(f'lshr {V} {mask}, {b}')}, {K(1)}")
    at_base = f.val(f"select <32 x i1> {f.val(f'icmp ne {V} {bit}, zeroinitializer')}, {V} {b}, {V} {K(-1)}")
    r = f.val(f"select <32 x i1> {f.val(f'icmp eq {V} {off}, zeroinitializer')}, {V} {at_base}, {V} {r}")
    inside = f.val(f"icmp ult {V} {base}, {K(32)}")
    cg.write(cg.dst_list(ins)[0], f.val(f"select <32 x i1> {inside}, {V} {r}, {V} {K(-1)}"), "b32")


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
       "redux": op_redux, "elect": op_elect, "fns": op_fns}
