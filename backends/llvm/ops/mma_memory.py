"""wmma.load and wmma.store (PTX ISA 9.7.14.4): a warp's fragment read from or
written to memory, one element position at a time (mma_frags.py says which
matrix element each lane's register holds).

Every distinct element position (a vector of 32 lane addresses) is checked
like any access (resolve.py: bounds, alignment, provenance; a failure stops
the launch naming its first lane) before any memory is touched, then read or
written. Laid out for compile time and stack frame (docs/performance.md,
"Tensor-core kernels"): the checked host pointers of each position go to a
buffer of the kernel as soon as they are known, so no vector value lives
across the checks' blocks (level-0 register allocation gives every such value
a stack slot of its own); 32- and 64-bit elements are then read with
``llvm.masked.gather`` / written with ``llvm.masked.scatter``, and 8- and
16-bit elements, which LLVM would split into 32 blocks of one lane each (no
such vector instruction exists), by an out-of-line loop over the lanes
(``ptxc_mx_ld<bits>`` / ``ptxc_mx_st<bits>``, ascending lane order, as a
scatter: the highest lane's value is the one left at a repeated address).
"""
from __future__ import annotations

import hashlib

from ptxc.errors import PtxcError

from ptxc.backends.llvm.irtext import lane_consts, splat
from ptxc.backends.llvm.instruments.initcheck_ops import track
from ptxc.backends.llvm.instruments.memcheck import KIND_LOAD, KIND_STORE
from ptxc.backends.llvm.ops.access import address, space_of, static_vector
from ptxc.backends.llvm.ops.common import types_of
from ptxc.backends.llvm.ops.mma_arith import V, MEM_LT, check_regs, mods_shape, pack_values, split_elements
from ptxc.backends.llvm.ops.mma_frags import Frag, wmma_frag
from ptxc.backends.llvm.ops.mma_outline import write_uncached
from ptxc.backends.llvm.ops.resolve import gather, resolve, scatter

LANE_LOOP = """define internal void @ptxc_mx_{kind}{bits}(ptr %pp0, i32 %mask, ptr %v0, i32 %n) noinline nounwind {{
entry:
  br label %group
group:
  %g = phi i32 [ 0, %entry ], [ %g1, %done ]
  %g64 = zext i32 %g to i64
  %pofs = mul i64 %g64, 256
  %pp = getelementptr inbounds i8, ptr %pp0, i64 %pofs
  %vofs = mul i64 %g64, {vbytes}
  %v = getelementptr inbounds i8, ptr %v0, i64 %vofs
{init}  br label %loop
loop:
  %m = phi i32 [ %mask, %group ], [ %m2, %body ]
  %z = icmp eq i32 %m, 0
  br i1 %z, label %done, label %body
body:
  %l = call i32 @llvm.cttz.i32(i32 %m, i1 true)
  %i = zext i32 %l to i64
  %pa = getelementptr inbounds ptr, ptr %pp, i64 %i
  %p = load ptr, ptr %pa, align 8
  %va = getelementptr inbounds i{bits}, ptr %v, i64 %i
{access}  %m1 = add i32 %m, -1
  %m2 = and i32 %m, %m1
  br label %loop
done:
  %g1 = add i32 %g, 1
  %more = icmp ult i32 %g1, %n
  br i1 %more, label %group, label %exit
exit:
  ret void
}}"""


def lane_loop(cg, kind: str, bits: int) -> str:
    """The name of the lane loop reading (kind 'ld') or writing ('st') one
    ``i<bits>`` per executing lane of each of n element positions:
    ``(ptr pointers[n][32], i32 mask, ptr values[n][32], i32 n)``, positions
    in order, lanes ascending; a load leaves 0 for the other lanes (the
    gather's pass-through)."""
    name = f"ptxc_mx_{kind}{bits}"
    if name not in cg.helpers:
        t, al = f"i{bits}", bits // 8
        if kind == "ld":
            init = f"  store <32 x {t}> zeroinitializer, ptr %v, align {al}\n"
            access = f"  %x = load {t}, ptr %p, align {al}\n  store {t} %x, ptr %va, align {al}\n"
        else:
            init = ""
            access = f"  %x = load {t}, ptr %va, align {al}\n  store {t} %x, ptr %p, align {al}\n"
        cg.helpers[name] = LANE_LOOP.format(kind=kind, bits=bits, init=init, access=access,
                                            vbytes=4 * bits)
    return name


def lane_addresses(cg, op, space: str) -> tuple[str, str]:
    """(<32 x i64> addresses, space for resolve.resolve) of an address operand."""
    addr, static = address(cg, op, space)
    if static is None:
        return addr, space
    placed, off = static
    sp = {"param": "param", "local": "local", "shared": "shared", "const": "const",
          "global": "global_seg"}[placed.space]
    return static_vector(cg, placed, off), sp


def wmma_parts(ins):
    """(matrix, layout, fragment) of a wmma.load/store."""
    matrix = next(m for m in ins.mods if m in ("a", "b", "c", "d"))
    layout = next(m for m in ins.mods if m in ("row", "col"))
    shape = mods_shape(ins)
    ts = types_of(ins)
    frag = wmma_frag(shape, matrix, ts[-1]) if ts else None
    if frag is None:
        raise PtxcError(f"shape .{shape} with .{ts[-1] if ts else '?'} elements")
    return matrix, layout, frag


def groups_of(frag: Frag) -> list[tuple]:
    """[(lane positions, elements holding them)] per distinct element position."""
    groups: dict = {}
    for e in range(frag.n):
        groups.setdefault(tuple(frag.at(lane, e) for lane in range(32)), []).append(e)
    return list(groups.items())


def buffer(cg, t: str, n: int) -> str:
    """A kernel-wide scratch buffer of ``n`` values of type ``t`` (entry block)."""
    bufs = getattr(cg, "mx_buffers", None)
    if bufs is None:
        bufs = cg.mx_buffers = {}
    if (t, n) not in bufs:
        bufs[(t, n)] = cg.f.alloca(f"[{n} x {t}]", "mxbuf", 64)
    return bufs[(t, n)]


def position_table(cg, groups: list, layout: str) -> str:
    """A constant global of the (major, minor) index vectors of every element
    position: row and column (row-major) or column and row (column-major)."""
    vals = []
    for pos, _ in groups:
        vals.append(lane_consts("i64", [r if layout == "row" else c for r, c in pos]))
        vals.append(lane_consts("i64", [c if layout == "row" else r for r, c in pos]))
    body = ", ".join(f"<32 x i64> {v}" for v in vals)
    name = "@ptxc_mxpos_" + hashlib.sha256(body.encode()).hexdigest()[:16]
    cg.decls.add(f"{name} = private unnamed_addr constant [{len(vals)} x <32 x i64>] [{body}], align 64")
    return name


def checked_pointers(cg, ins, frag: Frag, layout: str, stride_op, kind: int) -> tuple[list, str]:
    """Check every element position's lane addresses (in element order) and
    keep their host pointers in a buffer: ([elements per position], buffer
    of <32 x ptr> per position). The checks are one loop over the positions
    (their index vectors in a constant table), so a wmma.load/store's code
    does not grow with its fragment. ``kind`` (memcheck.KIND_*) for initcheck."""
    f = cg.f
    base, sp = lane_addresses(cg, ins.srcs[0], space_of(ins))
    if stride_op is None:
        stride = splat("i64", frag.cols if layout == "row" else frag.rows)
    else:
        stride = f.cast("zext", V(32, "i32"), cg.read(stride_op, "u32"), V(32, "i64"))
    es = frag.ebits // 8
    groups = groups_of(frag)
    ptrbuf = buffer(cg, "<32 x ptr>", len(groups))
    keep = buffer(cg, "<32 x i64>", 2)            # base and stride, reloaded per position
    index = buffer(cg, "i32", 1)
    table = position_table(cg, groups, layout)
    f.store("<32 x i64>", base, keep, 64)
    f.store("<32 x i64>", stride, f.gep(keep, 256), 64)
    f.store("i32", "0", index, 4)
    head, done = f.fresh_label("mxpos"), f.fresh_label("mxdone")
    f.br(head)
    f.label(head, dominated=True)
    g = f.cast("zext", "i32", f.load("i32", index, 4), "i64")
    major = f.load("<32 x i64>", f.gep(table, f.val(f"mul i64 {g}, 512")), 64)
    minor = f.load("<32 x i64>", f.gep(table, f.val(f"add i64 {f.val(f'mul i64 {g}, 512')}, 256")), 64)
    off = f.val(f"mul <32 x i64> {major}, {f.load('<32 x i64>', f.gep(keep, 256), 64)}")
    off = f.val(f"add <32 x i64> {off}, {minor}")
    if es > 1:
        off = f.val(f"mul <32 x i64> {off}, {splat('i64', es)}")
    addr = f.val(f"add <32 x i64> {f.load('<32 x i64>', keep, 64)}, {off}")
    f.store("<32 x ptr>", resolve(cg, sp, addr, None, es, es), f.gep(ptrbuf, f.val(f"mul i64 {g}, 256")), 64)
    track(cg, sp, None, addr, cg.emi, kind, es)
    g1 = f.val(f"add i64 {g}, 1")
    f.store("i32", f.cast("trunc", "i64", g1, "i32"), index, 4)
    f.cbr(f.icmp("ult", "i64", g1, str(len(groups))), head, done)
    f.label(done, dominated=True)
    return [elems for _, elems in groups], ptrbuf


def wmma_load(cg, ins):
    matrix, layout, frag = wmma_parts(ins)
    items = check_regs(ins.dsts[0], frag, f"wmma.load.{matrix}")
    stride = ins.srcs[1] if len(ins.srcs) > 1 else None
    f = cg.f
    lt, es = MEM_LT[frag.ebits], frag.ebits // 8
    groups, ptrbuf = checked_pointers(cg, ins, frag, layout, stride, KIND_LOAD)
    n = len(groups)
    if frag.ebits >= 32:
        vals = [gather(cg, lt, f.load("<32 x ptr>", f.gep(ptrbuf, 256 * g), 64), es, cg.em)
                for g in range(n)]
    else:
        out = buffer(cg, V(32, lt), n)
        f.call("void", lane_loop(cg, "ld", frag.ebits), [("ptr", ptrbuf), ("i32", cg.emi), ("ptr", out),
                                                         ("i32", str(n))])
        vals = [f.load(V(32, lt), f.gep(out, 32 * es * g), 64) for g in range(n)]
    raw = [None] * frag.n
    for elems, v in zip(groups, vals):
        for e in elems:
            raw[e] = v
    for item, v in zip(items, pack_values(f, raw, frag)):
        write_uncached(cg, item, v, f"b{frag.reg_bits}")


def wmma_store(cg, ins):
    matrix, layout, frag = wmma_parts(ins)
    if matrix != "d":
        raise PtxcError("wmma.store of a matrix other than d")
    items = check_regs(ins.srcs[1], frag, "wmma.store.d")
    stride = ins.srcs[2] if len(ins.srcs) > 2 else None
    if space_of(ins) in ("global", "generic"):
        cg.writes_global = True
    f = cg.f
    lt, es = MEM_LT[frag.ebits], frag.ebits // 8
    groups, ptrbuf = checked_pointers(cg, ins, frag, layout, stride, KIND_STORE)
    raw = split_elements(f, [cg.read(item, f"b{frag.reg_bits}") for item in items], frag)
    if frag.ebits >= 32:
        for g, elems in enumerate(groups):
            ptrs = f.load("<32 x ptr>", f.gep(ptrbuf, 256 * g), 64)
            scatter(cg, lt, raw[elems[0]], ptrs, es, cg.em)
        return
    vbuf = buffer(cg, V(32, lt), len(groups))
    for g, elems in enumerate(groups):
        f.store(V(32, lt), raw[elems[0]], f.gep(vbuf, 32 * es * g), 64)
    f.call("void", lane_loop(cg, "st", frag.ebits), [("ptr", ptrbuf), ("i32", cg.emi), ("ptr", vbuf),
                                                     ("i32", str(len(groups)))])
