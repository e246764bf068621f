"""ldmatrix and stmatrix: a warp loads or stores 8x8 matrices of 16-bit
elements, each lane giving the address of one 16-byte row (PTX ISA
9.7.14.5.15-16, in "Warp Level Matrix Multiply-Accumulate Instructions").

The rows are read (written) as four 32-bit words per giving lane; the
fragment each lane receives (gives) is picked from the flat vector of those
words with constant shuffles (mma.py's Flat), ``.trans`` by 16-bit halves.
The row addresses are checked like any access (resolve.py) and a shared one
is seen by racecheck as a 16-byte access per giving lane.
"""
from __future__ import annotations

from ptxc.errors import PtxcError

from ptxc.backends.llvm.instruments.check_hooks import race_hook
from ptxc.backends.llvm.instruments.memcheck import KIND_LOAD, KIND_STORE
from ptxc.backends.llvm.irtext import splat
from ptxc.backends.llvm.ops.access import space_of
from ptxc.backends.llvm.ops.mma_arith import V, Flat, regs_of
from ptxc.backends.llvm.ops.mma_memory import lane_addresses
from ptxc.backends.llvm.ops.mma_outline import write_uncached
from ptxc.backends.llvm.ops.resolve import elem_ptrs, gather, resolve, scatter


# ------------------------------------------------------------- ldmatrix
def matrix_count(ins, items) -> int:
    """.x1/.x2/.x4 of an ldmatrix/stmatrix with that many registers (m8n8 .b16)."""
    if "m8n8" not in ins.mods or "b16" not in ins.mods:
        raise PtxcError("only .m8n8 .b16 matrices")
    num = next((int(m[1:]) for m in ins.mods if m in ("x1", "x2", "x4")), None)
    if num is None:
        raise PtxcError("no .x1/.x2/.x4")
    if len(items) != num:
        raise PtxcError(f"needs {num} registers, got {len(items)}")
    return num


def row_pointers(cg, ins, num: int, kind: int):
    """Host pointers of the 16-byte rows whose addresses lanes 0 .. 8 num - 1
    give (checked: in bounds, 16-byte aligned), and the mask of those lanes;
    racecheck sees one warp access of 16 bytes per giving lane (``kind``:
    memcheck.KIND_LOAD or KIND_STORE)."""
    f = cg.f
    addr, sp = lane_addresses(cg, ins.srcs[0], space_of(ins))
    em, emi = cg.em, cg.emi
    givers = (1 << (8 * num)) - 1
    cg.emi = f.val(f"and i32 {emi}, {givers - (1 << 32) if givers >= 1 << 31 else givers}")
    cg.em = f.cast("bitcast", "i32", cg.emi, "<32 x i1>")
    try:
        ptrs, mask = resolve(cg, sp, addr, None, 16, 16), cg.em
        if sp in ("shared", "generic"):
            race_hook(cg, addr, None, cg.emi, kind, 16, generic=sp == "generic")
    finally:
        cg.em, cg.emi = em, emi
    return ptrs, mask


def half_words(cg, words: list[str]) -> "Flat":
    """The 16-bit halves of <32 x i32> ``words`` as one flat i16 vector:
    word k's low half is vector 2k, its high half 2k+1 (.b16 elements)."""
    f = cg.f
    halves = []
    for w in words:
        halves.append(f.cast("trunc", V(32, "i32"), w, V(32, "i16")))
        hi = f.val(f"lshr <32 x i32> {w}, {splat('i32', 16)}")
        halves.append(f.cast("trunc", V(32, "i32"), hi, V(32, "i16")))
    return Flat(cg, halves, "i16")


def join_halves(cg, lo: str, hi: str) -> str:
    """<32 x i32> words ``lo | hi << 16`` of two <32 x i16> vectors."""
    f = cg.f
    lo = f.cast("zext", V(32, "i16"), lo, V(32, "i32"))
    hi = f.cast("zext", V(32, "i16"), hi, V(32, "i32"))
    shifted = f.val(f"shl <32 x i32> {hi}, {splat('i32', 16)}")
    return f.val(f"or <32 x i32> {lo}, {shifted}")


def pad(idx) -> tuple:
    """A shuffle mask for 32 lanes from the first lanes' indices (rest: 0)."""
    idx = tuple(idx)
    return idx + (0,) * (32 - len(idx))


def op_stmatrix(cg, ins):
    """stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16: the inverse of
    ldmatrix; row r of matrix i (at lane 8i+r's address) is register i of
    lanes 4r .. 4r+3 (with .trans: column r of the matrix held as ldmatrix
    .trans would load it)."""
    items = regs_of(ins.srcs[1])
    num = matrix_count(ins, items)
    if space_of(ins) == "generic":
        cg.writes_global = True
    regs = [cg.read(item, "b32") for item in items]
    lanes = range(8 * num)          # the lanes giving row addresses; the others store nothing
    if "trans" not in ins.mods:
        flat = Flat(cg, regs, "i32")
        words = [flat.pick(pad(32 * (l // 8) + 4 * (l % 8) + w for l in lanes)) for w in range(4)]
    else:
        flat = half_words(cg, regs)
        words = []
        for w in range(4):
            lo, hi = (flat.pick(pad(32 * (2 * (l // 8) + (l % 8) % 2) + 4 * c + (l % 8) // 2 for l in lanes))
                      for c in (2 * w, 2 * w + 1))    # element (row l%8, column c) of matrix l//8
            words.append(join_halves(cg, lo, hi))
    ptrs, mask = row_pointers(cg, ins, num, KIND_STORE)
    for w, v in enumerate(words):
        scatter(cg, "i32", v, elem_ptrs(cg, ptrs, 4 * w), 4, mask)


def op_ldmatrix(cg, ins):
    """ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16: lanes 8i..8i+7
    give the row addresses of matrix i (16 bytes each); lane l receives, in
    register i, row l/4 elements 2(l%4), 2(l%4)+1 of matrix i (with .trans:
    column l/4, rows 2(l%4) and 2(l%4)+1)."""
    mods = ins.mods
    items = regs_of(ins.dsts[0])
    num = matrix_count(ins, items)
    ptrs, mask = row_pointers(cg, ins, num, KIND_LOAD)
    words = [gather(cg, "i32", elem_ptrs(cg, ptrs, 4 * w), 4, mask) for w in range(4)]
    lanes = range(32)
    if "trans" not in mods:
        flat = Flat(cg, words, "i32")
        regs = [flat.pick(tuple(32 * (l % 4) + 8 * i + l // 4 for l in lanes)) for i in range(num)]
    else:
        flat = half_words(cg, words)
        regs = []
        for i in range(num):
            lo, hi = (flat.pick(tuple(32 * (l // 4) + 8 * i + 2 * (l % 4) + h for l in lanes))
                      for h in (0, 1))
            regs.append(join_halves(cg, lo, hi))
    for item, v in zip(items, regs):
        write_uncached(cg, item, v, "b32")


OPS = {"ldmatrix": op_ldmatrix, "stmatrix": op_stmatrix}
