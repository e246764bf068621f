"""The arithmetic of the warp-level matrix instructions (mma.py, mma_outline.py,
mma_memory.py, ldmatrix.py): fragments as 32-lane register vectors, their
elements, and D = A*B + C as straight-line vector code.

A warp's fragments are its registers seen across all 32 lanes (mma_frags.py
says which matrix element each lane's register holds). The multiply first
turns every source fragment into one flat vector ``<32*n x T>`` (element
``e`` of lane ``l`` at ``32*e + l``); each value it needs from another lane
is then a ``shufflevector`` of that vector with a constant mask.

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
from ptxc.backends.llvm.ops.common import intr
from ptxc.backends.llvm.ops.mma_frags import Frag

CT = {"f16": "float", "bf16": "float", "tf32": "float", "f32": "float",
      "f64": "double", "s8": "i32", "u8": "i32", "s32": "i32"}
MEM_LT = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}


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
def split_elements(f, regs: list[str], frag: Frag) -> list[str]:
    """Raw element bits (<32 x iEBITS>, element order) of register values."""
    rb, eb = frag.reg_bits, frag.ebits
    out = []
    for reg in regs:
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


def pack_values(f, raw: list[str], frag: Frag) -> list[str]:
    """The fragment's register values (<32 x iRB>) of its raw elements."""
    rb, eb = frag.reg_bits, frag.ebits
    out = []
    for r in range(frag.nregs):
        acc = None
        for i in range(frag.per_reg):
            x = f.cast("zext", V(32, f"i{eb}"), raw[r * frag.per_reg + i], V(32, f"i{rb}"))
            if i:
                x = f.val(f"shl {V(32, f'i{rb}')} {x}, {splat(f'i{rb}', i * eb)}")
                x = f.val(f"or {V(32, f'i{rb}')} {acc}, {x}")
            acc = x
        out.append(acc)
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
def multiply_regs(h, ra: list, rb: list, rc: list, a: Frag, b: Frag, c: Frag, d: Frag,
                  sat: bool) -> list[str]:
    """The register values of D = A*B + C given those of A, B and C: straight-line
    vector code emitted into ``h.f`` (declarations into ``h.decls``)."""
    f = h.f
    K = a.cols
    ct = CT[a.etype]
    fa = Flat(h, [to_compute(h, x, a.etype) for x in split_elements(f, ra, a)], ct)
    fb = Flat(h, [to_compute(h, x, b.etype) for x in split_elements(f, rb, b)], ct)
    cvals = [to_compute(h, x, c.etype) for x in split_elements(f, rc, c)]
    wa, wb = a.where(), b.where()
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
                acc = intr(h, f"llvm.fma.{vn}", V(32, ct), [(V(32, ct), x), (V(32, ct), y), (V(32, ct), acc)])
        if ct == "i32":
            acc = int_accumulate(h, cvals[e], acc, sat)
        raw.append(from_compute(h, acc, d.etype))
    return pack_values(f, raw, d)
