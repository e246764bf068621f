"""Warp-level matrix instructions: mma.sync and wmma.load/store/mma (PTX ISA
9.7.14, "Warp Level Matrix Multiply-Accumulate Instructions"); ldmatrix and
stmatrix are in ldmatrix.py.

A warp's fragments are its registers seen across all 32 lanes (mma_frags.py
says which matrix element each lane's register holds). An instruction first
turns every source fragment into one flat vector ``<32*n x T>`` (element
``e`` of lane ``l`` at ``32*e + l``); each value it needs from another lane
is then a ``shufflevector`` of that vector with a constant mask, so the
whole operation is straight-line vector code.

Arithmetic (docs/executor.md, "Tensor cores"): D[i][j] = C[i][j] + sum over
k = 0, 1, ..., K-1 of A[i][k] * B[k][j], in that order, one fused
multiply-add per k: in f32 for f16/bf16/tf32 inputs (their products are
exact in f32, so each step rounds only the sum), in f64 for f64; for
s8/u8 the dot product is exact in 32 bits and is added to C wrapping, or
saturating with ``.satfinite``. tf32 inputs are f32 registers whose 13 low
mantissa bits are ignored (truncated); an f16 result is the f32 sum rounded
once.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.errors import PtxcError

from ptxc.backends.llvm.irtext import lane_consts, splat
from ptxc.backends.llvm.instruments.memcheck import KIND_LOAD, KIND_STORE
from ptxc.backends.llvm.ops.mma_frags import Frag, mma_frags, wmma_frag
from ptxc.backends.llvm.ops.common import intr, types_of
from ptxc.backends.llvm.instruments.initcheck_ops import track
from ptxc.backends.llvm.ops.access import address, space_of, static_vector
from ptxc.backends.llvm.ops.resolve import gather, resolve, scatter

CT = {"f16": "float", "bf16": "float", "tf32": "float", "f32": "float",
      "f64": "double", "s8": "i32", "u8": "i32", "s32": "i32"}
MEM_LT = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}
# .aligned matrix instructions: every lane of the warp must execute them (PTX
# ISA 9.7.14); codegen stops a launch where some lane does not (ERR_PARTIAL_WARP)
# instead of reading the idle lanes' registers.
WHOLE_WARP_OPS = frozenset({"mma", "wmma", "ldmatrix", "stmatrix"})


def V(n: int, t: str) -> str:
    return f"<{n} x {t}>"


def mods_shape(ins) -> str:
    shape = next((m for m in ins.mods if m.startswith("m") and "n" in m and "k" in m), None)
    if shape is None:
        raise PtxcError("no .mMnNkK shape")
    return shape


def regs_of(vec) -> list:
    return list(vec.items) if isinstance(vec, ir.Vec) else [vec]


def check_regs(vec, frag: Frag, what: str) -> list:
    items = regs_of(vec)
    if len(items) != frag.nregs:
        raise PtxcError(f"{what} needs {frag.nregs} registers, got {len(items)}")
    return items


# ------------------------------------------------------ fragment values
def raw_elements(cg, vec, frag: Frag, what: str) -> list[str]:
    """The fragment's elements as raw bits (<32 x iEBITS>), element order."""
    f = cg.f
    rb, eb = frag.reg_bits, frag.ebits
    out = []
    for item in check_regs(vec, frag, what):
        reg = cg.read(item, f"b{rb}")
        for i in range(frag.per_reg):
            x = reg if not i else f.val(f"lshr {V(32, f'i{rb}')} {reg}, {splat(f'i{rb}', i * eb)}")
            out.append(f.cast("trunc", V(32, f"i{rb}"), x, V(32, f"i{eb}")))
    return out


def to_compute(cg, x: str, etype: str) -> str:
    """Raw element bits -> the compute type (float, double, i32)."""
    f = cg.f
    if etype == "f16":
        h = f.cast("bitcast", V(32, "i16"), x, V(32, "half"))
        return f.cast("fpext", V(32, "half"), h, V(32, "float"))
    if etype == "bf16":
        w = f.cast("zext", V(32, "i16"), x, V(32, "i32"))
        w = f.val(f"shl {V(32, 'i32')} {w}, {splat('i32', 16)}")
        return f.cast("bitcast", V(32, "i32"), w, V(32, "float"))
    if etype == "tf32":
        w = f.val(f"and {V(32, 'i32')} {x}, {splat('i32', -8192)}")   # 0xFFFFE000
        return f.cast("bitcast", V(32, "i32"), w, V(32, "float"))
    if etype == "f32":
        return f.cast("bitcast", V(32, "i32"), x, V(32, "float"))
    if etype == "f64":
        return f.cast("bitcast", V(32, "i64"), x, V(32, "double"))
    if etype == "s32":
        return x
    return f.cast("zext" if etype == "u8" else "sext", V(32, "i8"), x, V(32, "i32"))


def from_compute(cg, v: str, etype: str) -> str:
    """Compute type -> raw bits of a D element (s32: already raw)."""
    f = cg.f
    if etype == "f32":
        return f.cast("bitcast", V(32, "float"), v, V(32, "i32"))
    if etype == "f16":
        h = f.cast("fptrunc", V(32, "float"), v, V(32, "half"))
        return f.cast("bitcast", V(32, "half"), h, V(32, "i16"))
    if etype == "f64":
        return f.cast("bitcast", V(32, "double"), v, V(32, "i64"))
    return v


def int_accumulate(cg, c: str, dot: str, sat: bool) -> str:
    """C + dot in s32: wrapping, or clamped with .satfinite (llvm.sadd.sat).
    The dot product itself is exact in i32 (|dot| <= 32 * 255 * 255)."""
    if sat:
        return intr(cg, "llvm.sadd.sat.v32i32", V(32, "i32"), [(V(32, "i32"), c), (V(32, "i32"), dot)])
    return cg.f.val(f"add <32 x i32> {c}, {dot}")


def pack_registers(cg, items: list, raw: list[str], frag: Frag) -> list[tuple]:
    """(register, value bits) pairs of a fragment given its raw elements."""
    f = cg.f
    rb, eb = frag.reg_bits, frag.ebits
    out = []
    for r, item in enumerate(items):
        acc = None
        for i in range(frag.per_reg):
            x = f.cast("zext", V(32, f"i{eb}"), raw[r * frag.per_reg + i], V(32, f"i{rb}"))
            if i:
                x = f.val(f"shl {V(32, f'i{rb}')} {x}, {splat(f'i{rb}', i * eb)}")
                x = f.val(f"or {V(32, f'i{rb}')} {acc}, {x}")
            acc = x
        out.append((item, acc, f"b{rb}"))
    return out


def concat(cg, vecs: list[str], t: str) -> tuple[str, int]:
    """One flat vector of the 32-lane vectors ``vecs`` (padded to a power of 2)."""
    f = cg.f
    vecs = list(vecs)
    while len(vecs) & (len(vecs) - 1):
        vecs.append("zeroinitializer")
    n = 32
    while len(vecs) > 1:
        mask = lane_consts("i32", range(2 * n))
        vecs = [f.val(f"shufflevector {V(n, t)} {vecs[i]}, {V(n, t)} {vecs[i + 1]}, <{2 * n} x i32> {mask}")
                for i in range(0, len(vecs), 2)]
        n *= 2
    return vecs[0], n


class Flat:
    """A fragment as one flat vector; ``pick(idx)`` gathers one value per lane."""

    def __init__(self, cg, vecs: list[str], t: str):
        self.cg, self.t = cg, t
        self.vec, self.n = concat(cg, vecs, t)
        self.cache: dict = {}

    def pick(self, idx: tuple) -> str:
        v = self.cache.get(idx)
        if v is None:
            v = self.cache[idx] = self.cg.f.val(
                f"shufflevector {V(self.n, self.t)} {self.vec}, {V(self.n, self.t)} poison, "
                f"<32 x i32> {lane_consts('i32', idx)}")
        return v


# ------------------------------------------------------------ multiply
def multiply(cg, ins, a: Frag, b: Frag, c: Frag, d: Frag, srcs, sat: bool) -> None:
    """D = A*B + C on the fragments; writes the registers of ins.dsts[0]."""
    f = cg.f
    K = a.cols
    ct = CT[a.etype]
    fa = Flat(cg, [to_compute(cg, x, a.etype) for x in raw_elements(cg, srcs[0], a, "A")], ct)
    fb = Flat(cg, [to_compute(cg, x, b.etype) for x in raw_elements(cg, srcs[1], b, "B")], ct)
    cvals = [to_compute(cg, x, c.etype) for x in raw_elements(cg, srcs[2], c, "C")]
    if CT[c.etype] != ct:
        raise PtxcError(f"accumulator .{c.etype} with .{a.etype} inputs")
    wa, wb = a.where(), b.where()
    dst_items = check_regs(ins.dsts[0], d, "D")
    raw = []
    for e in range(d.n):
        pos = [d.at(lane, e) for lane in range(32)]
        acc = "zeroinitializer" if ct == "i32" else cvals[e]
        for k in range(K):
            ia = tuple(32 * wa[(i, k)][0] + wa[(i, k)][1] for i, _ in pos)
            ib = tuple(32 * wb[(k, j)][0] + wb[(k, j)][1] for _, j in pos)
            x, y = fa.pick(ia), fb.pick(ib)
            if ct == "i32":
                prod = f.val(f"mul <32 x i32> {x}, {y}")
                acc = f.val(f"add <32 x i32> {acc}, {prod}")
            else:
                vn = "v32f32" if ct == "float" else "v32f64"
                acc = intr(cg, f"llvm.fma.{vn}", V(32, ct), [(V(32, ct), x), (V(32, ct), y), (V(32, ct), acc)])
        if ct == "i32":
            acc = int_accumulate(cg, cvals[e], acc, sat)
        raw.append(from_compute(cg, acc, d.etype))
    for item, v, t in pack_registers(cg, dst_items, raw, d):
        cg.write(item, v, t)


def op_mma(cg, ins):
    """mma.sync.aligned.<shape>.row.col{.satfinite}.dtype.atype.btype.ctype."""
    if "sync" not in ins.mods or any(m in ins.mods for m in ("sp", "block_scale")):
        raise PtxcError("only mma.sync without sparsity or block scaling")
    shape = mods_shape(ins)
    lay = [m for m in ins.mods if m in ("row", "col")]
    ts = types_of(ins)
    if len(ts) != 4 or lay != ["row", "col"]:
        raise PtxcError("this shape/layout/type combination")
    dt, at, bt, ctp = ts
    frags = mma_frags(shape, at, bt, ctp, dt)
    if frags is None:
        raise PtxcError(f"shape .{shape} with .{at}/.{bt} inputs")
    sat = "satfinite" in ins.mods
    if sat and dt != "s32":
        raise PtxcError(".satfinite on a float result")
    multiply(cg, ins, *frags, ins.srcs[:3], sat)


# ----------------------------------------------------------------- wmma
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


def element_addresses(cg, ins, frag: Frag, layout: str, stride_op, kind: int = KIND_LOAD):
    """Per distinct element position: (elements holding it, <32 x ptr>);
    ``kind`` (memcheck.KIND_*) for the initcheck variant (initcheck_ops.py)."""
    f = cg.f
    space = space_of(ins)
    base, sp = lane_addresses(cg, ins.srcs[0], space)
    if stride_op is None:
        stride = splat("i64", frag.cols if layout == "row" else frag.rows)
    else:
        stride = f.cast("zext", V(32, "i32"), cg.read(stride_op, "u32"), V(32, "i64"))
    es = frag.ebits // 8
    groups: dict = {}
    for e in range(frag.n):
        groups.setdefault(tuple(frag.at(lane, e) for lane in range(32)), []).append(e)
    out = []
    for pos, elems in groups.items():
        major = lane_consts("i64", [r if layout == "row" else c for r, c in pos])
        minor = lane_consts("i64", [c if layout == "row" else r for r, c in pos])
        off = f.val(f"mul <32 x i64> {major}, {stride}")
        off = f.val(f"add <32 x i64> {off}, {minor}")
        if es > 1:
            off = f.val(f"mul <32 x i64> {off}, {splat('i64', es)}")
        addr = f.val(f"add <32 x i64> {base}, {off}")
        out.append((elems, resolve(cg, sp, addr, None, es, es)))
        track(cg, sp, None, addr, cg.emi, kind, es)
    return out


def wmma_load(cg, ins):
    matrix, layout, frag = wmma_parts(ins)
    items = check_regs(ins.dsts[0], frag, f"wmma.load.{matrix}")
    stride = ins.srcs[1] if len(ins.srcs) > 1 else None
    lt = MEM_LT[frag.ebits]
    raw = [None] * frag.n
    for elems, ptrs in element_addresses(cg, ins, frag, layout, stride):
        v = gather(cg, lt, ptrs, frag.ebits // 8, cg.em)
        for e in elems:
            raw[e] = v
    for item, v, t in pack_registers(cg, items, raw, frag):
        cg.write(item, v, t)


def wmma_store(cg, ins):
    matrix, layout, frag = wmma_parts(ins)
    if matrix != "d":
        raise PtxcError("wmma.store of a matrix other than d")
    stride = ins.srcs[2] if len(ins.srcs) > 2 else None
    if space_of(ins) in ("global", "generic"):
        cg.writes_global = True
    raw = raw_elements(cg, ins.srcs[1], frag, "wmma.store.d")
    lt = MEM_LT[frag.ebits]
    for elems, ptrs in element_addresses(cg, ins, frag, layout, stride, KIND_STORE):
        scatter(cg, lt, raw[elems[0]], ptrs, frag.ebits // 8, cg.em)


def wmma_mma(cg, ins):
    """wmma.mma.sync.aligned.alayout.blayout.shape.dtype{.atype.btype}.ctype{.satfinite}."""
    shape = mods_shape(ins)
    ts = types_of(ins)
    if len(ts) == 2:                      # f16 inputs: .dtype.ctype
        dt, ctp = ts
        at = bt = "f16"
    elif len(ts) == 4:
        dt, at, bt, ctp = ts
    else:
        raise PtxcError("type list")
    sat = "satfinite" in ins.mods
    if sat and dt != "s32":
        raise PtxcError(".satfinite on a float result")
    frags = [wmma_frag(shape, "a", at), wmma_frag(shape, "b", bt), wmma_frag(shape, "c", ctp),
             wmma_frag(shape, "c", dt)]
    if None in frags or at != bt:
        raise PtxcError(f"shape .{shape} with .{at}/.{bt}/.{ctp}/.{dt}")
    multiply(cg, ins, *frags, ins.srcs[:3], sat)


def op_wmma(cg, ins):
    if "load" in ins.mods:
        return wmma_load(cg, ins)
    if "store" in ins.mods:
        return wmma_store(cg, ins)
    if "mma" in ins.mods:
        return wmma_mma(cg, ins)
    raise PtxcError("this wmma form")


OPS = {"mma": op_mma, "wmma": op_wmma}
