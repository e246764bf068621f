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

LANE_LOOP = """define internal void @ptxc_mx_{kind}{bits}(ptr %pp, i32 %mask, ptr %v) noinline nounwind {{
entry:
{init}  br label %loop
loop:
  %m = phi i32 [ %mask, %entry ], [ %m2, %body ]
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
  ret void
}}"""


def lane_loop(cg, kind: str, bits: int) -> str:
    """The name of the lane loop reading (kind 'ld') or writing ('st') one
    ``i<bits>`` per executing lane: ``(ptr pointers[32], i32 mask, ptr values[32])``;
    a load leaves 0 for the other lanes (the gather's pass-through)."""
    name = f"ptxc_mx_{kind}{bits}"
    if name not in cg.helpers:
        t, al = f"i{bits}", bits // 8
        if kind == "ld":
            init = f"  store <32 x {t}> zeroinitializer, ptr %v, align {al}\n"
            access = f"  %x = load {t}, ptr %p, align {al}\n  store {t} %x, ptr %va, align {al}\n"
        else:
            init = ""
            access = f"  %x = load {t}, ptr %va, align {al}\n  store {t} %x, ptr %p, align {al}\n"
        cg.helpers[name] = LANE_LOOP.format(kind=kind, bits=bits, init=init, access=access)
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


def checked_pointers(cg, ins, frag: Frag, layout: str, stride_op, kind: int) -> tuple[list, str]:
    """Check every element position's lane addresses (in element order) and
    keep their host pointers in a buffer: ([elements per position], buffer
    of <32 x ptr> per position). ``kind`` (memcheck.KIND_*) for initcheck."""
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
    f.store("<32 x i64>", base, keep, 64)
    f.store("<32 x i64>", stride, f.gep(keep, 256), 64)
    for g, (pos, _) in enumerate(groups):
        base = f.load("<32 x i64>", keep, 64)
        stride = f.load("<32 x i64>", f.gep(keep, 256), 64)
        major = lane_consts("i64", [r if layout == "row" else c for r, c in pos])
        minor = lane_consts("i64", [c if layout == "row" else r for r, c in pos])
        off = f.val(f"mul <32 x i64> {major}, {stride}")
        off = f.val(f"add <32 x i64> {off}, {minor}")
        if es > 1:
            off = f.val(f"mul <32 x i64> {off}, {splat('i64', es)}")
        addr = f.val(f"add <32 x i64> {base}, {off}")
        f.store("<32 x ptr>", resolve(cg, sp, addr, None, es, es), f.gep(ptrbuf, 256 * g), 64)
        track(cg, sp, None, addr, cg.emi, kind, es)
    return [elems for _, elems in groups], ptrbuf


def wmma_load(cg, ins):
    matrix, layout, frag = wmma_parts(ins)
    items = check_regs(ins.dsts[0], frag, f"wmma.load.{matrix}")
    stride = ins.srcs[1] if len(ins.srcs) > 1 else None
    f = cg.f
    lt, es = MEM_LT[frag.ebits], frag.ebits // 8
    groups, ptrbuf = checked_pointers(cg, ins, frag, layout, stride, KIND_LOAD)
    vals = []
    if frag.ebits >= 32:
        for g in range(len(groups)):
            ptrs = f.load("<32 x ptr>", f.gep(ptrbuf, 256 * g), 64)
            vals.append(gather(cg, lt, ptrs, es, cg.em))
    else:
        out = buffer(cg, V(32, lt), len(groups))
        loop = lane_loop(cg, "ld", frag.ebits)
        for g in range(len(groups)):
            f.call("void", loop, [("ptr", f.gep(ptrbuf, 256 * g)), ("i32", cg.emi),
                                  ("ptr", f.gep(out, 32 * es * g))])
        vals = [f.load(V(32, lt), f.gep(out, 32 * es * g), 64) for g in range(len(groups))]
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
    if frag.ebits < 32:
        vbuf = buffer(cg, V(32, lt), 1)
        loop = lane_loop(cg, "st", frag.ebits)
    for g, elems in enumerate(groups):
        if frag.ebits >= 32:
            ptrs = f.load("<32 x ptr>", f.gep(ptrbuf, 256 * g), 64)
            scatter(cg, lt, raw[elems[0]], ptrs, es, cg.em)
        else:
            f.store(V(32, lt), raw[elems[0]], vbuf, 64)
            f.call("void", loop, [("ptr", f.gep(ptrbuf, 256 * g)), ("i32", cg.emi), ("ptr", vbuf)])
