"""The fast path of ld/st: a warp access whose executing lanes are contiguous
(lane i at a0 + (i - first) * size) or uniform (every lane at a0), lie in one
segment, in bounds and aligned, and pass the provenance check, is one
``llvm.masked.load`` / ``llvm.masked.store`` (or one scalar load + broadcast,
one scalar store) instead of per-lane table lookups, checks and
gathers/scatters (docs/performance.md has the measurements).

The test is vector code ahead of the access; when it fails the access takes
the per-lane path of resolve.py unchanged, so faults (lane, address, kind),
provenance errors and the memory counters (computed before both paths) are
exactly those of the per-lane path: the fast path only runs accesses that
path would run without a fault. For contiguous lanes the per-lane tests are
monotonic, so the first and last executing lanes decide them; a uniform
store leaves the value of the last executing lane, as a scatter to one
address does (LLVM LangRef, llvm.masked.scatter: lanes store in order).

Not used for .local and .param (per-lane and parameter storage), nor in the
compiled check variants (memcheck, initcheck, racecheck, synccheck), which
look at every lane. By default only .global and generic accesses take it:
on .shared the per-lane path is cheaper than it is for global (no segment
table) and the test costs more than it saves where a warp's lanes read two
rows of a tile (matrixMul's 16 x 16 tiles: 0.76x, docs/performance.md);
``PTXC_FAST_MEM=all`` adds .shared and .const, ``PTXC_FAST_MEM=0`` turns the
fast path off (tests compare all three).
"""
from __future__ import annotations

import os

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments.memcheck import KIND_ATOMIC, KIND_STORE
from ptxc.backends.llvm.instruments.provenance_ir import with_provenance
from ptxc.backends.llvm.irtext import LANE_IDS, splat
from ptxc.backends.llvm.ops.access import static_address
from ptxc.backends.llvm.ops.common import intr
from ptxc.backends.llvm.values import vname

SEGMENT_SPACES = {"shared": "shared", "const": "const", "global": "globals"}


def enabled(cg, space: str, static) -> bool:
    """Whether this access may take the fast path at all (compile-time facts)."""
    flag = os.environ.get("PTXC_FAST_MEM", "1")
    if flag == "0":
        return False
    if cg.memcheck or cg.checks or getattr(cg, "initcheck", False):
        return False
    if static is not None:
        placed = static[0]
        space = "local" if placed.frame is not None else placed.space
    if flag != "all":        # default: shared and const per lane (docs/performance.md)
        return space in ("global", "generic")
    return space in ("global", "generic", "shared", "const")


class Fast:
    """The outcome of :func:`test`: ``ok`` (i1: take the fast path),
    ``contig`` (i1: contiguous, else uniform), ``ptr`` (the host pointer of
    the first executing lane), ``first``/``last`` (i32 lanes)."""

    def __init__(self, ok, contig, ptr, first, last):
        self.ok, self.contig, self.ptr, self.first, self.last = ok, contig, ptr, first, last

    def lane0_ptr(self, cg, stride: int) -> str:
        """Where lane 0 of a contiguous access would be: ptr - first * stride."""
        f = cg.f
        back = f.val(f"mul i64 {f.cast('zext', 'i32', self.first, 'i64')}, {-stride}")
        return f.val(f"getelementptr i8, ptr {self.ptr}, i64 {back}")


def test(cg, space: str, addr, static, nbytes: int, kind: int) -> Fast:
    """Emit the fast-path test of one access of ``nbytes`` per lane."""
    f = cg.f
    if static is not None:
        placed, off = static
        addr = splat("i64", static_address(cg, placed, off))
        space = SEGMENT_SPACES[placed.space]
    emi = cg.emi
    first = intr(cg, "llvm.cttz.i32", "i32", [("i32", emi), ("i1", "true")])
    lz = intr(cg, "llvm.ctlz.i32", "i32", [("i32", emi), ("i1", "true")])
    last = f.val(f"sub i32 31, {lz}")
    a0 = f.val(f"extractelement <32 x i64> {addr}, i32 {first}")
    contig, uniform = lane_shape(cg, addr, a0, first, nbytes)
    span = f.val(f"mul i64 {f.cast('zext', 'i32', f.val(f'sub i32 {last}, {first}'), 'i64')}, {nbytes}")
    span = f.val(f"select i1 {contig}, i64 {span}, i64 0")
    a_end = f.val(f"add i64 {f.val(f'add i64 {a0}, {span}')}, {nbytes}")
    if space in ("global", "generic"):
        ptr, inb = generic_range(cg, a0, a_end, kind)
        prov = with_provenance(cg, "0", addr)
        if prov != "0":
            inb = f.val(f"and i1 {inb}, {f.icmp('eq', 'i64', prov, '0')}")
    else:
        seg = {"global": "globals"}.get(space, space)
        size = cg.seg_size[seg]
        inb = f.val(f"and i1 {f.icmp('ult', 'i64', a0, size)}, {f.icmp('ule', 'i64', a_end, size)}")
        ptr = f.val(f"getelementptr i8, ptr {cg.seg_base[seg]}, i64 {a0}")
    aligned = f.icmp("eq", "i64", f.val(f"and i64 {a0}, {nbytes - 1}"), "0")
    shape = f.val(f"or i1 {contig}, {uniform}")
    ok = f.val(f"and i1 {f.val(f'and i1 {inb}, {aligned}')}, {shape}")
    ok = f.val(f"and i1 {ok}, {f.icmp('ne', 'i32', emi, '0')}")
    return Fast(ok, contig, ptr, first, last)


def lane_shape(cg, addr: str, a0: str, first: str, nbytes: int):
    """(contiguous, uniform): i1, over the executing lanes."""
    f = cg.f
    lane = f.val(f"sub <32 x i32> {LANE_IDS}, {cg.bcast(first, 'i32')}")
    rel = f.val(f"mul <32 x i64> {f.cast('sext', '<32 x i32>', lane, '<32 x i64>')}, {splat('i64', nbytes)}")
    base = cg.bcast(a0, "i64")
    want = f.val(f"add <32 x i64> {base}, {rel}")
    return all_equal(cg, addr, want), all_equal(cg, addr, base)


def all_equal(cg, a: str, b: str) -> str:
    f = cg.f
    ne = f.val(f"icmp ne <32 x i64> {a}, {b}")
    bad = f.cast("bitcast", "<32 x i1>", f.val(f"and <32 x i1> {ne}, {cg.em}"), "i32")
    return f.icmp("eq", "i32", bad, "0")


def generic_range(cg, a0: str, a_end: str, kind: int):
    """(host pointer of a0, i1: [a0, a_end) lies in one segment of the table,
    in bounds, with lane stride 0): the per-lane ptxc_resolve's test for
    monotonic lanes."""
    from ptxc.backends.llvm.ops.resolve import write_segments
    f = cg.f
    sh = cg.plan.shift
    segs = write_segments(cg) if kind in (KIND_STORE, KIND_ATOMIC) and cg.plan.const_size else "%segs"
    seg = f.val(f"lshr i64 {a0}, {sh}")
    last_seg = f.val(f"lshr i64 {f.val(f'sub i64 {a_end}, 1')}, {sh}")
    nsegs = f.cast("zext", "i32", cg.nsegs, "i64")
    valid = f.val(f"and i1 {f.icmp('ult', 'i64', seg, nsegs)}, {f.icmp('eq', 'i64', seg, last_seg)}")
    segc = f.val(f"select i1 {valid}, i64 {seg}, i64 0")
    ent = f.val(f"getelementptr i8, ptr {segs}, i64 {f.val(f'mul i64 {segc}, {Lo.SEG_ENTRY_BYTES}')}")
    base = f.load("ptr", ent, 8)
    size = f.load("i64", f.gep(ent, 8), 8)
    stride = f.load("i64", f.gep(ent, 16), 8)
    low = f.val(f"and i64 {a0}, {(1 << sh) - 1}")
    end = f.val(f"add i64 {low}, {f.val(f'sub i64 {a_end}, {a0}')}")
    inb = f.val(f"and i1 {valid}, {f.icmp('ule', 'i64', end, size)}")
    inb = f.val(f"and i1 {inb}, {f.icmp('eq', 'i64', stride, '0')}")
    return f.val(f"getelementptr i8, ptr {base}, i64 {low}"), inb


# ------------------------------------------------------------ the accesses
def expand_mask(cg, n: int) -> str:
    """The executing mask with each lane repeated ``n`` times (<32n x i1>)."""
    if n == 1:
        return cg.em
    idx = ", ".join(f"i32 {k}" for k in range(32) for _ in range(n))
    return cg.f.val(f"shufflevector <32 x i1> {cg.em}, <32 x i1> poison, <{32 * n} x i32> <{idx}>")


def load_contig(cg, fast: Fast, lt: str, es: int, n: int) -> list[str]:
    """The n element vectors of a contiguous load (<32 x lt> each)."""
    f = cg.f
    V = f"<{32 * n} x {lt}>"
    p = fast.lane0_ptr(cg, es * n)
    big = intr(cg, f"llvm.masked.load.{vname_n(lt, 32 * n)}.p0", V,
               [("ptr", p), ("i32", str(es)), (f"<{32 * n} x i1>", expand_mask(cg, n)),
                (V, "zeroinitializer")])
    if n == 1:
        return [big]
    out = []
    for i in range(n):
        idx = ", ".join(f"i32 {k * n + i}" for k in range(32))
        out.append(f.val(f"shufflevector {V} {big}, {V} poison, <32 x i32> <{idx}>"))
    return out


def load_uniform(cg, fast: Fast, lt: str, es: int, n: int) -> list[str]:
    """One scalar load per element, broadcast (zero in lanes that do not execute,
    as a masked gather gives)."""
    f = cg.f
    out = []
    for i in range(n):
        v = f.load(lt, f.gep(fast.ptr, i * es), es)
        out.append(f.val(f"select <32 x i1> {cg.em}, <32 x {lt}> {cg.bcast(v, lt)}, "
                         f"<32 x {lt}> zeroinitializer"))
    return out


def store_contig(cg, fast: Fast, lt: str, es: int, vals: list[str]) -> None:
    n = len(vals)
    V = f"<{32 * n} x {lt}>"
    big = interleave(cg, lt, vals)
    p = fast.lane0_ptr(cg, es * n)
    cg.decls.add(f"declare void @llvm.masked.store.{vname_n(lt, 32 * n)}.p0({V}, ptr, i32, <{32 * n} x i1>)")
    cg.f.emit(f"call void @llvm.masked.store.{vname_n(lt, 32 * n)}.p0({V} {big}, ptr {p}, "
              f"i32 {es}, <{32 * n} x i1> {expand_mask(cg, n)})")


def store_uniform(cg, fast: Fast, lt: str, es: int, vals: list[str]) -> None:
    """The last executing lane's values (what a scatter to one address leaves)."""
    f = cg.f
    for i, v in enumerate(vals):
        x = f.val(f"extractelement <32 x {lt}> {v}, i32 {fast.last}")
        f.store(lt, x, f.gep(fast.ptr, i * es), es)


def interleave(cg, lt: str, vals: list[str]) -> str:
    """<32n x lt> with lane k's element i at k*n + i."""
    f = cg.f
    n = len(vals)
    if n == 1:
        return vals[0]
    parts, w = list(vals), 32
    while len(parts) > 1:              # concatenate pairwise: <32n x lt> in element order
        idx = ", ".join(f"i32 {j}" for j in range(2 * w))
        parts = [f.val(f"shufflevector <{w} x {lt}> {parts[j]}, <{w} x {lt}> {parts[j + 1]}, "
                       f"<{2 * w} x i32> <{idx}>") for j in range(0, len(parts), 2)]
        w *= 2
    idx = ", ".join(f"i32 {i * 32 + k}" for k in range(32) for i in range(n))
    return f.val(f"shufflevector <{w} x {lt}> {parts[0]}, <{w} x {lt}> poison, <{w} x i32> <{idx}>")


def vname_n(lt: str, count: int) -> str:
    """The intrinsic suffix of <count x lt> (vname gives it for 32 lanes)."""
    return vname(lt).replace("v32", f"v{count}", 1)


# ------------------------------------------------------------ the branch
def branch(cg, fast: Fast):
    """Emit the three-way branch; returns (labels, restore) where labels =
    (contiguous, uniform, slow, merge) and restore() puts back the value cache
    of the branch point (values defined before it dominate every path)."""
    f = cg.f
    names = [f.fresh_label(h) for h in ("fvec", "fsca", "fslow", "fmerge")]
    test_u = f.fresh_label("fchk")
    snapshot = dict(cg.vcache)

    def restore():
        cg.vcache.clear()
        cg.vcache.update(snapshot)
    f.cbr(fast.ok, test_u, names[2])
    f.label(test_u, dominated=True)
    f.cbr(fast.contig, names[0], names[1])
    return names, restore
