"""Which matrix element each lane's fragment register holds, for the
warp-level matrix instructions the executor runs (mma.py, ldmatrix.py).

``mma.sync``, ``ldmatrix`` and ``stmatrix``: the layouts are the PTX ISA's
(section 9.7.14.5, "Matrix fragments for mma.m16n8k16 / m16n8k8 / m16n8k32 /
m8n8k4 ..."), with
``groupID g = %laneid >> 2`` and ``threadID_in_group t = %laneid % 4``; a
fragment's elements are numbered as in the ISA figures (a0, a1, ... : element
``i`` of register ``i // per_register``, low bits first). They agree with
CUTLASS CuTe's thread-value layouts of the same instructions
(``SM80_16x8_Row``, ``SM80_8x8_Row``, ``SM80_8x4`` in mma_traits_sm80.hpp).

``wmma``: the ISA leaves the fragment layout opaque. ptxc builds every wmma
fragment from the mma.sync fragments of the same types (docs/executor.md,
"Tensor cores"): a 16x16 A operand is the m16n8k16 A fragment, a 16x16 B
operand is the two m16n8k16 B fragments of columns 0-7 and 8-15 side by
side, a 16x16 accumulator the two m16n8 accumulators (columns 0-7, then
8-15); m32n8k16 and m8n32k16 stack or cut them (``_tile``); m16n16k8 tf32
uses the m16n8k8 ones, m8n8k4 f64 the DMMA ones. The f16 A and B fragments
have 16 elements (8 registers) for 4 to 16 distinct values, repeated
(``wmma.load`` fills every copy, ``wmma.mma`` reads the first).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

EBITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s32": 32, "s8": 8, "u8": 8, "f64": 64}


@dataclass(frozen=True)
class Frag:
    """One operand's fragment: element type, matrix shape, elements per lane
    and ``pos(g, t, e) -> (row, col)`` of element ``e``."""
    etype: str
    rows: int
    cols: int
    n: int
    pos: Callable[[int, int, int], tuple[int, int]]

    @property
    def ebits(self) -> int:
        return EBITS[self.etype]

    @property
    def reg_bits(self) -> int:
        return 64 if self.ebits == 64 else 32

    @property
    def per_reg(self) -> int:
        return self.reg_bits // self.ebits

    @property
    def nregs(self) -> int:
        return self.n // self.per_reg

    def at(self, lane: int, e: int) -> tuple[int, int]:
        return self.pos(lane >> 2, lane & 3, e)

    def where(self) -> dict:
        """(row, col) -> (element, lane) of its first holder; checks that every
        element of the matrix is held by some lane."""
        out = {}
        for e in range(self.n):
            for lane in range(32):
                out.setdefault(self.at(lane, e), (e, lane))
        assert len(out) == self.rows * self.cols, (self, len(out))
        return out


def _dup(pos, n: int):
    return lambda g, t, e: pos(g, t, e % n)


# ------------------------------------------------ mma.sync (PTX ISA figures)
def a16x16_h(g, t, e):      # m16n8k16 .f16/.bf16 A; also the 16x16 accumulator of wmma
    return g + 8 * ((e >> 1) & 1), 2 * t + (e & 1) + 8 * (e >> 2)


def b16x8_h(g, t, e):       # m16n8k16 .f16/.bf16 B
    return 2 * t + (e & 1) + 8 * (e >> 1), g


def c16x8(g, t, e):         # every m16n8 accumulator (f32, f16, s32)
    return g + 8 * (e >> 1), 2 * t + (e & 1)


def a16x8_h(g, t, e):       # m16n8k8 .f16/.bf16 A
    return g + 8 * (e >> 1), 2 * t + (e & 1)


def b8x8_h(g, t, e):        # m16n8k8 .f16/.bf16 B
    return 2 * t + e, g


def a16x8_tf32(g, t, e):    # m16n8k8 .tf32 A
    return g + 8 * (e & 1), t + 4 * (e >> 1)


def b8x8_tf32(g, t, e):     # m16n8k8 .tf32 B
    return t + 4 * e, g


def a16x4_tf32(g, t, e):    # m16n8k4 .tf32 A
    return g + 8 * e, t


def b4x8_tf32(g, t, e):     # m16n8k4 .tf32 B
    return t, g


def a16x32_b(g, t, e):      # m16n8k32 .s8/.u8 A
    return g + 8 * ((e >> 2) & 1), 4 * t + (e & 3) + 16 * (e >> 3)


def b32x8_b(g, t, e):       # m16n8k32 .s8/.u8 B
    return 4 * t + (e & 3) + 16 * (e >> 2), g


def a16x16_b(g, t, e):      # m16n8k16 .s8/.u8 A
    return g + 8 * (e >> 2), 4 * t + (e & 3)


def b16x8_b(g, t, e):       # m16n8k16 .s8/.u8 B
    return 4 * t + e, g


def a8x4_d(g, t, e):        # m8n8k4 .f64 A
    return g, t


def b4x8_d(g, t, e):        # m8n8k4 .f64 B
    return t, g


def c8x8_d(g, t, e):        # m8n8k4 .f64 C/D
    return g, 2 * t + e


# ------------------------------------------------------ wmma (ptxc's choice)
def _rows(pos, n: int, m: int, step: int):
    """``m`` copies of an n-element fragment, copy c shifted by ``c * step``
    rows (step > 0) or by ``c * -step`` columns (step < 0)."""
    def at(g, t, e):
        r, c = pos(g, t, e % n)
        k = e // n
        return (r + k * step, c) if step > 0 else (r, c - k * step)
    return at


def _top(pos, n: int):
    """The elements of a 16-row fragment that lie in rows 0-7, renumbered."""
    keep = [e for e in range(n) if pos(0, 0, e)[0] < 8]
    return len(keep), (lambda g, t, e: pos(g, t, keep[e]))


def _tile(matrix: str, M: int, N: int, etype: str):
    """(distinct elements, pos) of a wmma fragment of a .m16n16k16,
    .m32n8k16 or .m8n32k16 tile (K = 16): A M x 16, B 16 x N, C M x N, made
    of m16n8k16 fragments (A: stacked in rows; B and C: side by side in
    columns, C of m32n8k16 stacked in rows; the 8-row A and C of m8n32k16 are
    rows 0-7 of those)."""
    if matrix == "a":
        base = a16x16_h if etype in HALF else a16x16_b
        return _top(base, 8) if M == 8 else (8 * M // 16, _rows(base, 8, M // 16, 16))
    if matrix == "b":
        base = b16x8_h if etype in HALF else b16x8_b
        return 4 * N // 8, _rows(base, 4, N // 8, -8)
    if M == 8:
        n, top = _top(c16x8, 4)
        return n * N // 8, _rows(top, n, N // 8, -8)
    if M == 32:
        return 8, _rows(c16x8, 4, 2, 16)
    return 4 * N // 8, _rows(c16x8, 4, N // 8, -8)


HALF = ("f16", "bf16")
BYTE = ("s8", "u8")
ACC = ("f32", "f16", "s32")

# shape -> {atype class -> (A, B, C) (element count, pos) and K}
MMA_SHAPES = {
    "m16n8k16": {HALF: ((8, a16x16_h), (4, b16x8_h)), BYTE: ((8, a16x16_b), (4, b16x8_b))},
    "m16n8k8": {HALF: ((4, a16x8_h), (2, b8x8_h)), ("tf32",): ((4, a16x8_tf32), (2, b8x8_tf32))},
    "m16n8k4": {("tf32",): ((2, a16x4_tf32), (1, b4x8_tf32))},
    "m16n8k32": {BYTE: ((16, a16x32_b), (8, b32x8_b))},
    "m8n8k4": {("f64",): ((1, a8x4_d), (1, b4x8_d))},
}


def mnk(shape: str) -> tuple[int, int, int]:
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def mma_frags(shape: str, atype: str, btype: str, ctype: str, dtype: str):
    """(A, B, C, D) fragments of ``mma.sync.<shape>``, or None if not run."""
    forms = MMA_SHAPES.get(shape)
    if forms is None:
        return None
    m, n, k = mnk(shape)
    for cls, ((na, pa), (nb, pb)) in forms.items():
        if atype in cls and btype in cls:
            break
    else:
        return None
    if (atype in HALF) != (btype in HALF) or (atype in HALF and atype != btype):
        return None
    acc = c8x8_d if shape == "m8n8k4" else c16x8

    def cfrag(t):
        return Frag(t, m, n, m * n // 32, acc)
    return Frag(atype, m, k, na, pa), Frag(btype, k, n, nb, pb), cfrag(ctype), cfrag(dtype)


# m16n16k8 .tf32 and m8n8k4 .f64: shape -> matrix -> element type -> Frag
def _wb8x16_tf32(g, t, e):   # two m16n8k8 .tf32 B fragments side by side
    return t + 4 * (e & 1), g + 8 * (e >> 1)


SPECIAL = {
    "m16n16k8": {"a": {"tf32": Frag("tf32", 16, 8, 4, a16x8_tf32)},
                 "b": {"tf32": Frag("tf32", 8, 16, 4, _wb8x16_tf32)},
                 "c": {"f32": Frag("f32", 16, 16, 8, _rows(c16x8, 4, 2, -8))}},
    "m8n8k4": {"a": {"f64": Frag("f64", 8, 4, 1, a8x4_d)},
               "b": {"f64": Frag("f64", 4, 8, 1, b4x8_d)},
               "c": {"f64": Frag("f64", 8, 8, 2, c8x8_d)}},
}
TILES = {"m16n16k16": (16, 16), "m32n8k16": (32, 8), "m8n32k16": (8, 32)}
TYPES = {"a": HALF + BYTE, "b": HALF + BYTE, "c": ACC}


def wmma_frag(shape: str, matrix: str, etype: str):
    """The fragment of ``wmma.load.<matrix>`` / ``wmma.store.d`` (matrix 'c'
    for both c and d), or None if not run. Fragments hold M K / 32, K N / 32
    or M N / 32 elements, except f16 A and B: always 16 (8 registers, as in
    the ISA), the distinct ones repeated."""
    matrix = "c" if matrix == "d" else matrix
    if shape in SPECIAL:
        return SPECIAL[shape].get(matrix, {}).get(etype)
    if shape not in TILES or etype not in TYPES.get(matrix, ()):
        return None
    M, N = TILES[shape]
    n, pos = _tile(matrix, M, N, etype)
    rows, cols = {"a": (M, 16), "b": (16, N), "c": (M, N)}[matrix]
    if etype == "f16" and matrix in "ab":
        return Frag(etype, rows, cols, 16, _dup(pos, n))
    return Frag(etype, rows, cols, n, pos)
