"""atom and red: atomic operations and reductions on global, shared (and
generic) memory (PTX ISA, "Parallel Synchronization and Communication
Instructions": atom, red).

The forms ptxc runs are those of access.atomic_form (the others are a
run-time "not supported yet" error). The lanes' addresses are checked like
any access (resolve.py); the atomics then run lane by lane in lane order
with LLVM ``atomicrmw``/``cmpxchg`` (safe when CTAs run on several threads).
On ``.shared``/``.shared::cta`` memory, which only its own CTA's worker
thread touches, the integer operations, ``add.f32/f64``, ``exch`` and
``cas`` are a plain load, the operation and a store (``PLAIN``: the same
values in the same lane order, without a locked instruction); ``min``/``max``
on floats keep ``atomicrmw`` (its minnum/maxnum semantics). An integer
add whose executing lanes all address one word is one locked add of their
sum (atomic_aggregate.py).
With memory counters on, the lane addresses first go to
mem_count.count_access.
"""
from __future__ import annotations

from ptxc.backends.llvm.instruments.initcheck_ops import track
from ptxc.backends.llvm.instruments.mem_count import count_access
from ptxc.backends.llvm.instruments.memcheck import KIND_ATOMIC
from ptxc.backends.llvm.irtext import vt
from ptxc.backends.llvm.ops import atomic_aggregate
from ptxc.backends.llvm.ops.access import address, atomic_form, space_of
from ptxc.backends.llvm.ops.resolve import resolve_masked
from ptxc.backends.llvm.values import bits_of, lty


def atomic(cg, ins, has_result: bool):
    form = atomic_form(ins)
    if form is None:
        return cg.unsupported(ins)
    op, t, rmw = form
    space = space_of(ins)
    if space in ("global", "generic"):
        cg.uses_global_atomics = True
        cg.writes_global = True
    es = bits_of(t) // 8
    a_idx = 0
    addr, static = address(cg, ins.srcs[a_idx], space)
    count_access(cg, ins, space, addr, static, es)
    ptrs, _, emi = resolve_masked(cg, space, addr, static, es, es, KIND_ATOMIC)
    track(cg, space, static, addr, emi, KIND_ATOMIC, es)
    lt = lty(t)
    b = cg.read(ins.srcs[a_idx + 1], t)
    c = cg.read(ins.srcs[a_idx + 2], t) if op == "cas" else None
    plain = cta_private(ins) and rmw in PLAIN
    if atomic_aggregate.applies(rmw, lt, plain):        # one locked add for a warp at one address
        old = atomic_aggregate.aggregated_add(
            cg, lt, ptrs, b, emi, has_result and bool(ins.results),
            lambda: lane_atomics(cg, lt, ptrs, b, c, rmw, es, emi, plain))
    else:
        old = lane_atomics(cg, lt, ptrs, b, c, rmw, es, emi, plain)
    if has_result:
        cg.write(ins.results[0] if ins.results else None, old, t)


PLAIN = ("add", "and", "or", "xor", "xchg", "max", "min", "umax", "umin", "uinc_wrap",
         "udec_wrap", "fadd", "cas")


def cta_private(ins) -> bool:
    """Shared memory of the executing CTA only (not a cluster's)."""
    return any(m in ("shared", "shared::cta") for m in ins.mods)


def plain_rmw(f, lt: str, rmw: str, old: str, x: str) -> str:
    """The value an ``atomicrmw rmw`` stores (LangRef), without atomicity."""
    if rmw in ("add", "and", "or", "xor", "fadd"):
        return f.val(f"{rmw} {lt} {old}, {x}")
    if rmw == "xchg":
        return x
    if rmw in ("max", "min", "umax", "umin"):
        pred = {"max": "sgt", "min": "slt", "umax": "ugt", "umin": "ult"}[rmw]
        return f.select("i1", f.icmp(pred, lt, old, x), lt, old, x)
    one = f.val(f"add {lt} {old}, 1")
    if rmw == "uinc_wrap":                     # old >= x ? 0 : old + 1
        return f.select("i1", f.icmp("uge", lt, old, x), lt, "0", one)
    wrap = f.val(f"or i1 {f.icmp('eq', lt, old, '0')}, {f.icmp('ugt', lt, old, x)}")
    return f.select("i1", wrap, lt, x, f.val(f"sub {lt} {old}, 1"))     # udec_wrap


def plain_lane(f, lt: str, p: str, x: str, y, rmw: str, align: int) -> str:
    """One lane's operation as load, compute, store; the old value."""
    old = f.load(lt, p, align)
    if rmw != "cas":
        f.store(lt, plain_rmw(f, lt, rmw, old, x), p, align)
        return old
    if lt in ("float", "double"):              # cmpxchg compares the bits
        it = "i32" if lt == "float" else "i64"
        eq = f.icmp("eq", it, f.cast("bitcast", lt, old, it), f.cast("bitcast", lt, x, it))
    else:
        eq = f.icmp("eq", lt, old, x)
    f.store(lt, f.select("i1", eq, lt, y, old), p, align)
    return old


def lane_atomics(cg, lt: str, ptrs: str, b: str, c, rmw: str, align: int, mask: str,
                 plain: bool = False) -> str:
    """Apply the atomic for the lanes of ``mask`` (i32) in lane order (the
    set bits, lowest first: cttz); returns the old values (0 for the other
    lanes). ``plain``: without atomic instructions (plain_lane)."""
    f = cg.f
    V = vt(lt)
    out = f.alloca(f"[32 x {lt}]", "atom", 64)
    f.store(V, "zeroinitializer", out, 64)
    arrays = {}                                 # operands as arrays: no variable extractelement
    for name, t, v in (("p", "<32 x ptr>", ptrs), ("b", V, b), ("c", V, c)):
        if v is not None:
            arrays[name] = f.alloca(t, "atom" + name, 64)
            f.store(t, v, arrays[name], 64)
    cg.decls.add("declare i32 @llvm.cttz.i32(i32, i1)")
    head, body, done = (f.fresh_label(x) for x in ("ahead", "abody", "adone"))
    pre = f.cur_label
    f.cbr(f.icmp("ne", "i32", mask, "0"), head, done)
    f.label(head, dominated=True)
    left = f.tmp("left")
    phi = len(f.lines)
    f.lines.append("")
    i = f.call("i32", "llvm.cttz.i32", [("i32", left), ("i1", "true")])

    def lane(name, t, size):
        return f.load(t, f.val(f"getelementptr [32 x {t}], ptr {arrays[name]}, i32 0, i32 {i}"), size)
    p = lane("p", "ptr", 8)
    x = lane("b", lt, align)
    y = lane("c", lt, align) if rmw == "cas" else None
    if plain:
        old = plain_lane(f, lt, p, x, y, rmw, align)
    elif rmw == "cas":
        if lt in ("float", "double"):
            it = "i32" if lt == "float" else "i64"
            xi, yi = f.cast("bitcast", lt, x, it), f.cast("bitcast", lt, y, it)
            pair = f.val(f"cmpxchg ptr {p}, {it} {xi}, {it} {yi} monotonic monotonic, align {align}")
            old = f.cast("bitcast", it, f.val(f"extractvalue {{ {it}, i1 }} {pair}, 0"), lt)
        else:
            pair = f.val(f"cmpxchg ptr {p}, {lt} {x}, {lt} {y} monotonic monotonic, align {align}")
            old = f.val(f"extractvalue {{ {lt}, i1 }} {pair}, 0")
    else:
        old = f.val(f"atomicrmw {rmw} ptr {p}, {lt} {x} monotonic, align {align}")
    slot = f.val(f"getelementptr [32 x {lt}], ptr {out}, i32 0, i32 {i}")
    f.store(lt, old, slot, align)
    f.lines.append(f"  {left}n = and i32 {left}, {f.val(f'sub i32 {left}, 1')}")
    f.lines[phi] = f"  {left} = phi i32 [ {mask}, %{pre} ], [ {left}n, %{f.cur_label} ]"
    f.cbr(f.icmp("ne", "i32", f"{left}n", "0"), head, done)
    f.label(done, dominated=True)
    return f.load(V, out, 64)


def op_atom(cg, ins):
    atomic(cg, ins, True)


def op_red(cg, ins):
    atomic(cg, ins, False)


OPS = {"atom": op_atom, "red": op_red}
