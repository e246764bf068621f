"""Hand-derived references for ZLUDA's ``test_spirv_run`` kernels (the shared
corpus, zluda/test_spirv_run/*.ptx), used by tests/test_zluda_kernels.py.

Each :class:`Case` names a corpus file, the launch (one CTA, ``block``
threads), and one or more runs: the bytes of the input buffer and the
expected content of the output buffer. The expected values were written from
the PTX ISA semantics of the instruction(s) each kernel exercises (comments
give the derivation), as numpy/Python computations on the chosen inputs —
never by running ptxc. Where ZLUDA's own test (ptx/src/test/spirv_run/mod.rs,
checked on NVIDIA hardware) uses an input worth keeping, that input is one of
the runs and its hand-derived result agrees with ZLUDA's.

Comparison (see ``compare`` in the test module): integers exactly; floats
bit for bit with any NaN matching any NaN (``ulps``: at most that many units
in the last place apart; ``atol`` / ``rtol``: numpy allclose), used only for
``.approx`` instructions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

U8, U16, U32, U64 = np.uint8, np.uint16, np.uint32, np.uint64
S16, S32, S64 = np.int16, np.int32, np.int64
F16, F32, F64 = np.float16, np.float32, np.float64
M32, M64 = (1 << 32) - 1, (1 << 64) - 1
NAN = float("nan")
INF = float("inf")


# ----------------------------------------------------------------- helpers
def a(dtype, *vals) -> np.ndarray:
    """An array of ``dtype``; Python ints are taken modulo the width (so -1
    may be written for a .u32 all-ones pattern)."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        bits = 8 * dt.itemsize
        return np.array([int(v) & ((1 << bits) - 1) for v in vals], dtype=f"u{dt.itemsize}").view(dt)
    return np.array(vals, dtype=dt)


def cat(*arrays) -> np.ndarray:
    """The concatenated bytes of several arrays (a mixed-type buffer)."""
    return np.concatenate([np.ascontiguousarray(x).view(np.uint8).reshape(-1) for x in arrays])


def fbits(u: int) -> float:
    """The f32 whose bit pattern is ``u``."""
    return float(np.array([u], dtype=U32).view(F32)[0])


def hbits(x) -> int:
    """The f16 bit pattern of x (numpy's f16 conversion rounds to nearest even)."""
    return int(np.array([x], dtype=F16).view(U16)[0])


def bf16(x) -> int:
    """bf16 bits of an f32 value x: round the f32 bit pattern to nearest even."""
    u = int(np.array([x], dtype=F32).view(U32)[0])
    lsb = (u >> 16) & 1
    return ((u + 0x7FFF + lsb) >> 16) & 0xFFFF


def sx(v: int, bits: int) -> int:
    """Sign-extend the low ``bits`` bits of v."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def f32(x) -> float:
    return float(np.float32(x))


def rz_f64(q: Fraction) -> float:
    """The exact rational q (nonzero, in the normal range) rounded toward zero to f64."""
    neg = q < 0
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    m = math.floor(q / Fraction(2) ** (e - 52))          # 53-bit significand, truncated
    r = math.ldexp(m, e - 52)
    return -r if neg else r


def ftz32(x: float) -> float:
    """Flush an f32 subnormal to a zero of the same sign."""
    return math.copysign(0.0, x) if x != 0 and abs(x) < 2.0 ** -126 else x


def mulf(x, y):
    with np.errstate(all="ignore"):
        return float(F32(x) * F32(y))


def addf(x, y):
    with np.errstate(all="ignore"):
        return float(F32(x) + F32(y))


def divf(x, y):
    with np.errstate(all="ignore"):
        return float(F32(x) / F32(y))


# ----------------------------------------------------------------- cases
@dataclass
class Case:
    file: str                       # corpus file stem (test_spirv_run/<file>.ptx)
    out_dtype: object               # the output buffer viewed as this dtype
    n_out: int                      # ... with this many elements
    runs: list                      # [(input bytes or None, expected array)]
    kernel: str | None = None       # default: the file stem
    block: int = 1
    shared: int = 0                 # dynamic shared bytes (kernels with .extern .shared)
    ulps: int = 0
    atol: float = 0.0
    rtol: float = 0.0
    out_fill: int = 0xA5            # initial byte value of the output buffer
    compare: slice | None = None    # compare only these output elements
    bug: str | None = None          # known executor bug: xfail(strict=True)
    id: str | None = None           # test id (default: the file stem)

    @property
    def name(self):
        return self.id or self.file


def run(inp, exp):
    return (inp, exp)


def unchanged(dtype, n, fill=0xA5):
    """The output buffer as prefilled (a kernel that stores nothing)."""
    return np.full(n * np.dtype(dtype).itemsize, fill, U8).view(dtype)


CASES: list[Case] = []


def case(*args, **kw):
    CASES.append(Case(*args, **kw))


# ------------------------------------------------------- integer arithmetic
# add.u64 d, a, 1 (wraps modulo 2^64)
for f in ("add", "add_non_coherent", "add_tuning", "exit", "bra", "block", "malformed_label", "call"):
    case(f, U64, 1, [run(a(U64, 1), a(U64, 2)), run(a(U64, M64), a(U64, 0)),
                     run(a(U64, 0x7FFFFFFFFFFFFFFF), a(U64, 1 << 63))])
# sub.u64 d, a, 1
case("sub", U64, 1, [run(a(U64, 2), a(U64, 1)), run(a(U64, 0), a(U64, M64))])


def add128(x, y, sub=False):
    A = sum(v << (32 * i) for i, v in enumerate(x))
    B = sum(v << (32 * i) for i, v in enumerate(y))
    R = (A - B if sub else A + B) & ((1 << 128) - 1)
    return [(R >> (32 * i)) & M32 for i in range(4)]


# add.cc / addc.cc / addc: a 128-bit add of four 32-bit limbs (carry chain)
_ax = [((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0), (1, 0, 0, 0)),          # ZLUDA's input
       ((0xFFFFFFFF, 0xFFFFFFFF, 0, 7), (1, 0, 0xFFFFFFFF, 1)),
       ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (1, 0, 0, 0))]
case("add_extended", U32, 4, [run(a(U32, *x, *y), a(U32, *add128(x, y))) for x, y in _ax])
# sub.cc / subc.cc / subc: 128-bit subtract with borrow
_sx = [((0, 0, 0, 1), (1, 0, 0, 0)), ((5, 0, 0, 0), (7, 0, 0, 0)), ((0, 9, 3, 0x80000000), (1, 9, 4, 0))]
case("sub_extended", U32, 4, [run(a(U32, *x, *y), a(U32, *add128(x, y, sub=True))) for x, y in _sx])


def addc_cc(x, y):
    # add.cc.u32 cc, 0xffffffff, 1 sets CC.CF = 1; addc.cc.s32 a = a + b + 1 (CF out);
    # addc.u32 b = 0 + 0 + CF; the u64 result is {lo=a, hi=b}
    s = x + y + 1
    return (s & M32) | ((s >> 32) << 32)


case("addc_cc_s32", U64, 1, [run(a(U32, x, y), a(U64, addc_cc(x, y)))
                             for x, y in [(0x62D0B1FD, 0xB632D4DF), (1, 2), (0xFFFFFFFF, 0),
                                          (0x80000000, 0x7FFFFFFF)]])
# sub.cc.s32 a = a - b; then addc.u32 b = CC.CF. Only the low word is checked:
# the ISA calls CC.CF after sub.cc a "borrow-out", while NVIDIA hardware (and
# ZLUDA's test) reads 0 after a borrow, so the high word is left out.
case("subc_cc_s32", U32, 2, [run(a(U32, x, y), a(U32, (x - y) & M32, 0))
                             for x, y in [(0x627ADF75, 0x864CCEF5), (10, 3), (0, 1)]],
     compare=slice(0, 1))

# add.sat.s32 (clamped to [-2^31, 2^31-1]) and add.s32 (wraps)
_sat = [(-2**31, -1), (2**31 - 1, 1), (5, -7), (2**31 - 1, 2**31 - 1)]
case("add_s32_sat", S32, 2, [run(a(S32, x, y), a(S32, max(-2**31, min(2**31 - 1, x + y)), sx(x + y, 32)))
                             for x, y in _sat])

# mul.lo.u64 d, a, 2 / mul.hi.u64 d, a, 2
_m = [1, M64, 0x8000000000000001, 0x123456789ABCDEF0]
case("mul_lo", U64, 1, [run(a(U64, x), a(U64, (x * 2) & M64)) for x in _m])
case("mul_hi", U64, 1, [run(a(U64, x), a(U64, (x * 2) >> 64)) for x in _m])
# mul.wide.s32: full 64-bit signed product
_w = [(0x01000000, 0x01000000), (-3, 0x7FFFFFFF), (-2**31, -2**31), (-2**31, 2**31 - 1)]
case("mul_wide", S64, 1, [run(a(S32, x, y), a(S64, x * y)) for x, y in _w])
# mul.lo.s32 d, a, -1
case("constant_negative", S32, 1, [run(a(S32, x), a(S32, sx(-x, 32))) for x in (-101, 5, -2**31, 0)])
# mad.lo.s32 d = (a*b).lo + c
_mad = [(2, 3, 4), (2, -3, 10), (0x10000, 0x10000, 7), (-2**31, 2, -1)]
case("mad_s32", S32, 1, [run(a(S32, x, y, z), a(S32, sx(x * y + z, 32))) for x, y, z in _mad])
# mad.wide.s32 d(s64) = a*b (64-bit) + c(s64); input: s32 a, s32 b, s64 c at +8
_madw = [(-1, 3, 4 + (5 << 32)), (-2, 0x7FFFFFFF, 5), (-2**31, -2**31, -1)]
case("mad_wide", S64, 1, [run(cat(a(S32, x, y), a(S64, z)), a(S64, sx(x * y + z, 64))) for x, y, z in _madw])


def mad_ext(x, y, c):
    """mad.lo.cc / madc.lo.cc / madc.lo.cc / madc.lo: (a*b).lo + c_i + carry chain."""
    p = (x * y) & M32
    out, cf = [], 0
    for i, ci in enumerate(c):
        s = p + ci + (cf if i else 0)
        out.append(s & M32)
        cf = s >> 32
    return out


_mx = [(0xFFFFFFFF, 2, (1, 1, 2, 0)), (3, 0x55555556, (0xFFFFFFFF, 0xFFFFFFFD, 5, 10))]
case("mad_extended", U32, 4, [run(a(U32, x, y, *c), a(U32, *mad_ext(x, y, c))) for x, y, c in _mx])


# mul24.{lo,hi}: the 48-bit product of the low 24 bits (signed for .s32), bits [31:0] / [47:16]
def mul24(x, y, signed, hi):
    if signed:
        t = sx(x, 24) * sx(y, 24)
    else:
        t = (x & 0xFFFFFF) * (y & 0xFFFFFF)
    return ((t >> 16) if hi else t) & M32


_m24 = [0b01110101_01010101_01010101, 0xFF123456, 0x00800000, 0x7FFFFF]
case("mul24_lo_u32", U32, 1, [run(a(U32, x), a(U32, mul24(x, x, False, False))) for x in _m24])
case("mul24_hi_u32", U32, 1, [run(a(U32, x), a(U32, mul24(x, x, False, True))) for x in _m24])
# the .s32 kernels multiply -x by x
case("mul24_lo_s32", U32, 1, [run(a(S32, x), a(U32, mul24(-x, x, True, False))) for x in _m24])
case("mul24_hi_s32", U32, 1, [run(a(S32, x), a(U32, mul24(-x, x, True, True))) for x in _m24])

# rem.s32: C semantics, the sign follows the dividend
_rem = [(21692, 13), (7, -3), (-7, 3), (-7, -3), (5, 7)]
case("rem", S32, 1, [run(a(S32, x, y), a(S32, int(math.fmod(x, y)))) for x, y in _rem])

# abs.s32 / neg.s32: abs(-2^31) and neg(-2^31) are -2^31 (two's complement wrap)
case("abs", S32, 1, [run(a(S32, x), a(S32, sx(abs(x), 32))) for x in (-2**31, -5, 7, 0)])
case("neg", S32, 1, [run(a(S32, x), a(S32, sx(-x, 32))) for x in (181, -5, -2**31, 0)])
# min.s32 / max.s32
_mm = [(555, 444), (-5, 3), (-2**31, 2**31 - 1)]
case("min", S32, 1, [run(a(S32, x, y), a(S32, min(x, y))) for x, y in _mm])
case("max", S32, 1, [run(a(S32, x, y), a(S32, max(x, y))) for x, y in _mm])
# sad.s64 d = c + |a - b| (result1 with (a, b), result2 with (b, a))
_sad = [(12, -38, 915), (-5, 10, 100), (7, 7, -1)]
case("sad_s64", S64, 2, [run(a(S64, x, y, z), a(S64, z + abs(x - y), z + abs(y - x))) for x, y, z in _sad])


# dp4a.s32.s32: c + sum of the four signed byte products
def dp4a(x, y, c):
    return (c + sum(sx(x >> (8 * i), 8) * sx(y >> (8 * i), 8) for i in range(4))) & M32


# dp2a.hi.s32.s32: c + a.h0 * b.byte2 + a.h1 * b.byte3 (signed)
def dp2a_hi(x, y, c):
    return (c + sum(sx(x >> (16 * i), 16) * sx(y >> (8 * (i + 2)), 8) for i in range(2))) & M32


_dp = [(0x8e2da590, 0xedeaee14, 0x248a9f70), (0xFC03FE01, 0x08F90605, 100), (0x80808080, 0x80808080, -1)]
case("dp4a", U32, 1, [run(a(U32, x, y, c), a(U32, dp4a(x, y, c))) for x, y, c in _dp])
case("dp2a", U32, 1, [run(a(U32, x, y, c), a(U32, dp2a_hi(x, y, c))) for x, y, c in _dp])

# ------------------------------------------------------------- bit operations
case("and", U32, 1, [run(a(U32, 6, 3), a(U32, 2)), run(a(U32, 0xF0F0F0F0, 0x0FF00FF0), a(U32, 0x00F000F0))])
case("or", U64, 1, [run(a(U64, 1, 2), a(U64, 3)), run(a(U64, 1 << 63, 0xF0), a(U64, (1 << 63) | 0xF0))])
case("xor", U32, 1, [run(a(U32, 0b01010010_00011010_01000000_00001101, 0b11100110_10011011_00001100_00100011),
                         a(U32, 0b01010010_00011010_01000000_00001101 ^ 0b11100110_10011011_00001100_00100011)),
                     run(a(U32, 0xFFFFFFFF, 0x12345678), a(U32, 0xEDCBA987))])
case("not", U64, 1, [run(a(U64, 0), a(U64, M64)), run(a(U64, 0x0123456789ABCDEF), a(U64, 0xFEDCBA9876543210))])
# shl.b64 by 2; shr.s32 by 1 (arithmetic); shr.s16 by 16 (shift >= width: all sign bits)
case("shl", U64, 1, [run(a(U64, 11), a(U64, 44)), run(a(U64, 0xC000000000000001), a(U64, 4))])
case("shr", S32, 1, [run(a(S32, x), a(S32, x >> 1)) for x in (-2, -5, 7, -2**31)])
case("shr_oob", S16, 1, [run(a(S16, x), a(S16, -1 if x < 0 else 0)) for x in (-32768, -5, 5, 32767)])


# shf.{l,r}.{clamp,wrap}.b32 d, a, b, c: funnel shift of the 64-bit {b:a}
def shf(x, y, c, left, clamp):
    n = min(c, 32) if clamp else c & 31
    v = (y << 32) | x
    return ((v << n) >> 32) & M32 if left else (v >> n) & M32


_shf = [(0x12345678, 0x9abcdef0, 12), (0x12345678, 0x9abcdef0, 44), (0x12345678, 0x9abcdef0, 0),
        (0x12345678, 0x9abcdef0, 32)]
for _f, _l, _c in [("shf_l", True, True), ("shf_l_clamp", True, True), ("shf_l_wrap", True, False),
                   ("shf_r", False, True), ("shf_r_clamp", False, True), ("shf_r_wrap", False, False)]:
    case(_f, U32, 1, [run(a(U32, x, y, c), a(U32, shf(x, y, c, _l, _c))) for x, y, c in _shf])


# bfe.u32 d, a, pos, len (ISA pseudocode: pos, len taken mod 256; zero-filled)
def bfe_u32(x, pos, ln):
    pos, ln = pos & 0xFF, ln & 0xFF
    return sum(((x >> (pos + i)) & 1) << i for i in range(32) if i < ln and pos + i <= 31)


_bfe = [(0b11111000_11000001_00100010_10100000, 16, 8), (0x12345678, 4, 8), (0xF0000000, 28, 8),
        (0xFFFFFFFF, 0x104, 4), (0xFFFFFFFF, 40, 4), (0xABCD, 0, 0)]
case("bfe", U32, 1, [run(a(U32, x, p, n), a(U32, bfe_u32(x, p, n))) for x, p, n in _bfe])


# bfi.b32 d, a, b, pos, len: insert the low len bits of a into b at pos
def bfi(x, y, pos, ln):
    pos, ln = pos & 0xFF, ln & 0xFF
    f = y
    for i in range(ln):
        if pos + i > 31:
            break
        f = (f & ~(1 << (pos + i))) | (((x >> i) & 1) << (pos + i))
    return f & M32


_bfi = [(0b10, 0b101, 0, 2), (0xF, 0x12345678, 8, 4), (0xFFFF, 0, 28, 8), (5, 0xAAAAAAAA, 0, 0),
        (1, 0, 0x120, 1)]
case("bfi", U32, 1, [run(a(U32, *v), a(U32, bfi(*v))) for v in _bfi])


# bfind.shiftamt.u32: 31 - (index of the most significant 1), 0xffffffff for 0
def bfind_sa(x):
    return M32 if x == 0 else 31 - (x.bit_length() - 1)


_bf = [(0, 1, 0x80000000), (0x00010000, 0x7FFFFFFF, 3)]
case("bfind_shiftamt", U32, 3, [run(a(U32, *v), a(U32, *map(bfind_sa, v))) for v in _bf])


# bmsk.clamp.b32 d, pos, width: ((1 << width) - 1) << pos, both clamped to 32, truncated
def bmsk_clamp(pos, width):
    pos, width = min(pos, 32), min(width, 32)
    return (((1 << width) - 1) << pos) & M32


case("bmsk_clamp_b32", U32, 1, [run(a(U32, p, w), a(U32, bmsk_clamp(p, w)))
                                for p, w in [(24, 12), (4, 8), (40, 4), (0, 40), (0, 0)]])
# brev.b32 / clz.b32 / popc.b32 / popc.b64
case("brev", U32, 1, [run(a(U32, x), a(U32, int(f"{x:032b}"[::-1], 2)))
                      for x in (0b11000111_01011100_10101110_11111011, 1, 0x12345678)])
case("clz", U32, 1, [run(a(U32, x), a(U32, 32 - x.bit_length()))
                     for x in (0b00000101_00101101_00010011_10101011, 0, 1, 0x80000000)])
case("popc", U32, 1, [run(a(U32, x), a(U32, bin(x).count("1")))
                      for x in (0b10111100_10010010_01001001_10001010, 0, 0xFFFFFFFF)])
case("popc_b64", U32, 1, [run(a(U64, x), a(U32, bin(x).count("1")))
                          for x in (M64, 0x8000000000000001, 0, 0x0123456789ABCDEF)])


# prmt.b32 d, a, b, sel (default mode): byte i of d = byte sel_i & 7 of {b, a}
# (a = bytes 0-3, b = bytes 4-7); sel_i & 8 replicates that byte's sign bit
def prmt(x, y, sel):
    src = [(x >> (8 * i)) & 0xFF for i in range(4)] + [(y >> (8 * i)) & 0xFF for i in range(4)]
    d = 0
    for i in range(4):
        s = (sel >> (4 * i)) & 0xF
        b = src[s & 7]
        if s & 8:
            b = 0xFF if b & 0x80 else 0
        d |= b << (8 * i)
    return d


_pr = [(0x70c507d6, 0x6fbd4b5c), (0x11223344, 0x55667788)]
case("prmt", U32, 1, [run(a(U32, x, y), a(U32, prmt(x, y, 30212))) for x, y in _pr])
case("prmt_signext", U32, 1, [run(a(U32, x, y), a(U32, prmt(x, y, 0x0A08)))
                              for x, y in [(0x0100FE80, 0), (0x12F45680, 0), (0x7F007F01, 0xFFFFFFFF)]])
case("prmt_slow", U32, 1, [run(a(U32, x, y, s), a(U32, prmt(x, y, s & 0xFFFF)))
                           for x, y, s in [(0x70c507d6, 0x6fbd4b5c, 30212), (0x11223344, 0x55667788, 0x1357),
                                           (0x11223344, 0x55667788, 0xFFFF3210), (0x80FF7F01, 0, 0x89AB)]])

# ------------------------------------------------------------- compare / select
case("setp", U64, 1, [run(a(U64, x, y), a(U64, 1 if x < y else 2)) for x, y in [(10, 11), (3, 2), (1 << 63, 1)]])
# not.pred flips the setp.lt result
case("pred_not", U64, 1, [run(a(U64, x, y), a(U64, 2 if x < y else 1)) for x, y in [(10, 11), (3, 2), (1 << 63, 1)]])
# setp.lt.and.u32 p, a, b, !c_pred: (a < b) && (c == 0)
case("setp_bool_and", U32, 1, [run(a(U32, x, y, c), a(U32, int(x < y and c == 0)))
                               for x, y, c in [(1, 2, 0), (1, 2, 5), (3, 2, 0), (0xFFFFFFFF, 1, 0)]])
# setp.gt.ftz.f32: r3 = (r1 > r2) ? r1 : r2, comparing flushed values (NaN: false)
_sg = [(NAN, 1.0), (1.0, 2.0), (3.0, 2.0), (1e-40, -1e-40), (-0.0, 0.0)]
case("setp_gt", F32, 1, [run(a(F32, x, y), a(F32, x if ftz32(f32(x)) > ftz32(f32(y)) else y)) for x, y in _sg])
# setp.leu.ftz.f32: unordered or <=
_sl = [(1.0, NAN), (1.0, 2.0), (3.0, 2.0), (1e-40, -1e-40), (NAN, 5.0)]
case("setp_leu", F32, 1, [run(a(F32, x, y), a(F32, x if (math.isnan(x) or math.isnan(y) or
                                                          ftz32(f32(x)) <= ftz32(f32(y))) else y))
                          for x, y in _sl])
_pairs = [(0.5, NAN), (NAN, 0.5), (NAN, NAN), (0.5, 0.5), (INF, -INF), (-0.0, 0.0)]
_p1, _p2 = _pairs[:4], [_pairs[3], _pairs[4], _pairs[0], _pairs[5]]
_inps = [a(F32, *[v for p in pp for v in p]) for pp in (_p1, _p2)]
_nans = [[int(math.isnan(x) or math.isnan(y)) for x, y in pp] for pp in (_p1, _p2)]
case("setp_nan", U32, 4, [run(i, a(U32, *n)) for i, n in zip(_inps, _nans)])
case("setp_num", U32, 4, [run(i, a(U32, *[2 * (1 - v) for v in n])) for i, n in zip(_inps, _nans)])
# selp.u16 d, a, b, 0 / 1 (immediate predicate)
case("selp", U16, 1, [run(a(U16, 100, 200), a(U16, 200))])
case("selp_true", U16, 1, [run(a(U16, 100, 200), a(U16, 100))])


# set.gtu.u32.f16: 0xffffffff if a > b or unordered; set.gtu.u32.f16x2: per half 0xffff / 0
def gtu(x, y):
    return math.isnan(x) or math.isnan(y) or x > y


def h2(lo, hi):
    return hbits(lo) | (hbits(hi) << 16)


_sf = [((NAN, NAN), (3.14, -INF), (-0.0, 0.0)), ((1.0, 2.0), (3.0, 0.5), (1.0, 1.0)),
       ((2.0, 1.0), (NAN, -1.0), (1.0, -2.0))]
case("set_f16", U32, 2, [run(cat(a(U16, hbits(s[0]), hbits(s[1])), a(U32, h2(*p), h2(*q))),
                             a(U32, M32 if gtu(*s) else 0,
                               (0xFFFF if gtu(p[0], q[0]) else 0) | (0xFFFF0000 if gtu(p[1], q[1]) else 0)))
                         for s, p, q in _sf])
# set.gt.f16x2.f16x2: per half 1.0 (0x3c00) if a > b (ordered) else 0.0
_sg2 = [((-0.0, float(np.array([0x38d3], U16).view(F16)[0])), (0.0, float(np.array([0x35aa], U16).view(F16)[0]))),
        ((3.0, NAN), (1.0, 1.0)), ((-1.0, 2.0), (-2.0, 2.0))]
case("set_gt_f16x2", U32, 1, [run(a(U32, h2(*p), h2(*q)),
                                  a(U32, (0x3C00 if p[0] > q[0] else 0) | ((0x3C00 if p[1] > q[1] else 0) << 16)))
                              for p, q in _sg2])

# ------------------------------------------------------------- conversions
# cvt.s16.s8 with .b32 registers: the low byte sign-extended, the s16 result
# sign-extended to the 32-bit destination register
case("cvt_s16_s8", U32, 1, [run(a(U32, x), a(U32, sx(x, 8))) for x in (0x139231C2, 0xFF, 0x12345678, 0x80)])
case("cvt_s64_s32", S64, 1, [run(a(S32, x), a(S64, x)) for x in (-1, 2**31 - 1, -2**31)])
# ld.s16 into an s32 register sign-extends
case("sign_extend", S32, 1, [run(a(S16, x), a(S32, x)) for x in (-1, -32768, 32767)])
# cvt.sat.u32.s32 clamps to [0, 2^32-1]; cvt.s32.u32 keeps the bits
case("cvt_sat_s_u", S32, 1, [run(a(S32, x), a(S32, max(0, x))) for x in (-1, 7, -2**31, 2**31 - 1)])


# cvt.pack.sat.{u8,s8}.s32.b32 d, a, b, c: d = c[15:0] << 16 | sat(a) << 8 | sat(b)
def pack8(x, y, c, signed):
    lo, hi = (-128, 127) if signed else (0, 255)
    ta, tb = max(lo, min(hi, x)), max(lo, min(hi, y))
    return ((c & 0xFFFF) << 16) | ((ta & 0xFF) << 8) | (tb & 0xFF)


_pk = [(-257, 257, -130436883), (5, -5, 0x12345678), (127, 128, 0)]
case("cvt_pack", U32, 2, [run(a(S32, x, y, c), a(U32, pack8(x, y, c, False), pack8(x, y, c, True)))
                          for x, y, c in _pk])
# cvt.rni.f32.f32 (nearest even integer) / cvt.rzi.f32.f32 (toward zero)
_rn = [(9.5, 10.5), (2.5, -1.5), (0.5, 3.7), (-0.5, 1e10)]
case("cvt_rni", F32, 2, [run(a(F32, x, y), a(F32, np.rint(F32(x)), np.rint(F32(y)))) for x, y in _rn])
_rz = [(-13.8, 12.9), (2.7, -2.7), (-0.5, 1e10), (NAN, -INF)]
case("cvt_rzi", F32, 2, [run(a(F32, x, y), a(F32, np.trunc(F32(x)), np.trunc(F32(y)))) for x, y in _rz])


# cvt.rpi.ftz.s32.f32: ceil of the flushed input, saturated; NaN -> 0
def ceil_s32(x):
    x = ftz32(f32(x))
    if math.isnan(x):
        return 0
    return int(max(-2**31, min(2**31 - 1, math.ceil(x)))) if math.isfinite(x) else (2**31 - 1 if x > 0 else -2**31)


_cs = [(-13.8, 12.9), (1.1, -1.9), (NAN, 3e9), (-3e9, 1e-40)]
case("cvt_s32_f32", S32, 2, [run(a(F32, x, y), a(S32, ceil_s32(x), ceil_s32(y))) for x, y in _cs])


# cvt.rni.u16.f32: nearest even, saturated to [0, 65535]; NaN -> 0
def rni_u16(x):
    x = f32(x)
    if math.isnan(x):
        return 0
    return int(max(0, min(65535, np.rint(x)))) if math.isfinite(x) else (65535 if x > 0 else 0)


case("cvt_rni_u16_f32", U16, 1, [run(a(F32, x), a(U16, rni_u16(x)))
                                 for x in (fbits(0x477FFF80), 3.5, -5.0, 70000.0, NAN, 2.5)])
# cvt.ftz.f64.f32: exact, subnormal inputs flushed to a zero of the same sign
case("cvt_f64_f32", F64, 1, [run(a(F32, x), a(F64, ftz32(f32(x)))) for x in (0.125, 1.5, 1e-40, -1e-40, -INF)])


# cvt.rn.f16x2.f32 d, a, b: a -> upper half, b -> lower half (round to nearest even)
def f16x2(x, y):
    with np.errstate(all="ignore"):
        return (hbits(F32(x)) << 16) | hbits(F32(y))


case("cvt_f16x2_f32", U32, 1, [run(a(F32, x, y), a(U32, f16x2(x, y)))
                               for x, y in [(1.0, 2.0), (1 + 2.0 ** -11, 65520.0), (-3.14, 1e-8)]])


# cvt.rn.relu.f16x2.f32: like cvt.rn.f16x2.f32, negative results become 0
def relu16(x):
    return 0 if x < 0 else hbits(F32(x))


case("cvt_relu_f16x2_f32", U32, 2, [run(a(F32, *v), a(U32, (relu16(v[0]) << 16) | relu16(v[1]),
                                                      (relu16(v[2]) << 16) | relu16(v[3])))
                                    for v in [(-1.0, 1.0, 3.14, -INF), (-1.5, 2.5, 0.5, -3.0)]])
# cvt.rn.bf16x2.f32: a -> upper half, b -> lower half, nearest even
case("cvt_rn_bf16x2_f32", U32, 1, [run(a(F32, x, y), a(U32, (bf16(x) << 16) | bf16(y)))
                                   for x, y in [(0.40625, 12.9), (1.0, 2.0), (fbits(0x3F808000), fbits(0x3F818000))]])


# e4m3 (bias 7, max 448, NaN 0x7f, no inf) and e5m2 (bias 15, max 57344) from f32,
# round to nearest even; .satfinite clamps overflow and inf to the largest finite value
def to_f8(x, ebits, mbits, bias, maxval):
    x = f32(x)
    if math.isnan(x):
        return 0x7F
    s = 0x80 if math.copysign(1, x) < 0 else 0
    m = abs(x)
    if m >= maxval:
        m = maxval
    q = Fraction(m)
    if q == 0:
        return s
    e = max(math.floor(math.log2(m)), 1 - bias)        # subnormals share the minimum exponent
    ulp = Fraction(2) ** (e - mbits)
    k = q / ulp
    n = math.floor(k)
    if k - n > Fraction(1, 2) or (k - n == Fraction(1, 2) and n % 2):
        n += 1
    v = n * ulp
    if v > maxval:
        v = Fraction(maxval)
    # encode v
    if v < Fraction(2) ** (1 - bias):
        return s | int(v / Fraction(2) ** (1 - bias - mbits))
    e = math.floor(math.log2(v))
    frac = int((v / Fraction(2) ** e - 1) * 2 ** mbits)
    return s | ((e + bias) << mbits) | frac


def e4m3(x):
    return to_f8(x, 4, 3, 7, 448.0)


def e5m2(x):
    return to_f8(x, 5, 2, 15, 57344.0)


case("cvt_rn_satfinite_e4m3x2_f32", U16, 1, [run(a(F32, x, y), a(U16, (e4m3(x) << 8) | e4m3(y)))
                                             for x, y in [(0.40625, 12.9), (1.0, 500.0), (-2.0, 0.1),
                                                          (1.0625, 1.1875), (NAN, -1e9)]])
case("cvt_rn_satfinite_e5m2x2_f32", U16, 1, [run(a(F32, x, y), a(U16, (e5m2(x) << 8) | e5m2(y)))
                                             for x, y in [(0.375, -5256.6), (1.0, 1e6), (-0.5, 3.0)]])


# cvt.rn.f16x2.e4m3x2 d, a(b16): the upper byte -> upper half (exact)
def e4m3_value(b):
    s = -1.0 if b & 0x80 else 1.0
    e, m = (b >> 3) & 0xF, b & 7
    return s * (m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))


case("cvt_rn_f16x2_e4m3x2", U32, 1, [run(a(U16, x), a(U32, (hbits(e4m3_value(x >> 8)) << 16) | hbits(e4m3_value(x & 0xFF))))
                                     for x in (0x2D55, 0x3840, 0xC001)])
# e5m2 is the upper byte of an f16: the conversion is exact, byte << 8 per half
case("cvt_rn_f16x2_e5m2x2", U32, 1, [run(a(U16, x), a(U32, ((x >> 8) << 24) | ((x & 0xFF) << 8)))
                                     for x in (0x36ED, 0x3C40)])

# uint_to_fp_bf16: dispatch 2 stores (value == 1) as u32; dispatch 3 stores bf16(1.0 or 0.0)
# as u16 (the upper half of the prefilled slot stays); anything else stores nothing
case("uint_to_fp_bf16", U8, 4, [run(a(U32, 1, 3), cat(a(U16, 0x3F80), a(U8, 0xA5, 0xA5))),
                                run(a(U32, 0, 3), cat(a(U16, 0), a(U8, 0xA5, 0xA5))),
                                run(a(U32, 1, 2), cat(a(U32, 1))), run(a(U32, 5, 2), cat(a(U32, 0))),
                                run(a(U32, 1, 9), a(U8, 0xA5, 0xA5, 0xA5, 0xA5))])

# ------------------------------------------------------------- floating point
# add.ftz.f32 (inputs and result flushed) and add.f32 (IEEE, subnormals kept)
_af = [(fbits(0x800000), fbits(0x007FFFFF)), (1.5e-38, -1.4e-38), (1e-40, 0.0), (1.5, 2.25)]
case("add_ftz", F32, 2, [run(a(F32, x, y), a(F32, ftz32(addf(ftz32(f32(x)), ftz32(f32(y)))), addf(x, y)))
                         for x, y in _af])
# mul.ftz.f32 / mul.f32
_mf = [(fbits(0x80400000), 0.5), (2.0, 3.5), (1e-20, 1e-20), (1e-39, 4.0), (-INF, 0.0)]
case("mul_ftz", F32, 1, [run(a(F32, x, y), a(F32, ftz32(mulf(ftz32(f32(x)), ftz32(f32(y)))))) for x, y in _mf])
case("mul_non_ftz", F32, 1, [run(a(F32, x, y), a(F32, mulf(x, y))) for x, y in _mf])
# mul.f32 by 0.5: 2^-149 * 0.5 is a tie -> 0; 3*2^-149 * 0.5 -> 2*2^-149 (even)
case("constant_f32", F32, 1, [run(a(F32, x), a(F32, mulf(x, 0.5)))
                              for x in (10.0, fbits(1), fbits(3), -3.0)])
# div.ftz.rn.f32 (flushed) and mul.f32 (not flushed) / div.rn.f32 (not flushed) and mul.ftz.f32
_df = [(fbits(0x16A2028D), fbits(0x5E89F6AE)), (6.0, 3.0), (1.0, 3.0), (1e-39, 2.0), (1.0, 0.0)]
case("div_ftz", F32, 2, [run(a(F32, x, y), a(F32, ftz32(divf(ftz32(f32(x)), ftz32(f32(y)))), mulf(x, y)))
                         for x, y in _df])
case("div_noftz", F32, 2, [run(a(F32, x, y), a(F32, divf(x, y), ftz32(mulf(ftz32(f32(x)), ftz32(f32(y))))))
                           for x, y in _df])
# div.approx.f32: within 2 ulp
case("div_approx", F32, 1, [run(a(F32, x, y), a(F32, divf(x, y))) for x, y in [(1.0, 2.0), (1.0, 3.0), (7.0, -2.0)]],
     ulps=2)


# fma.rn.f32: a*b+c rounded once (f64 holds these products and sums exactly)
def fma32(x, y, z):
    return f32(float(F64(f32(x)) * F64(f32(y)) + F64(f32(z))))


_fm = [(2.0, 3.0, 5.0), (1 + 2.0 ** -12, 1 + 2.0 ** -12, -1.0), (-1.5, 4.0, 6.0)]
case("fma", F32, 1, [run(a(F32, *v), a(F32, fma32(*v))) for v in _fm])


# fma.rn.f16x2 / fma.rn.bf16x2: per half a*b+c rounded once (exact in f64 here)
def hval(u):
    return float(np.array([u], U16).view(F16)[0])


def bval(u):
    return fbits(u << 16)


def fma_x2(x, y, z, val, enc):
    r = 0
    for i in range(2):
        sh = 16 * i
        p = val((x >> sh) & 0xFFFF) * val((y >> sh) & 0xFFFF) + val((z >> sh) & 0xFFFF)
        r |= enc(p) << sh
    return r


_fx = [(0x40004040, 0x40404080, 0x40A04040)]
_h = [(hbits(1.5) | hbits(-0.5) << 16, hbits(2.0) | hbits(3.0) << 16, hbits(0.25) | hbits(1.0) << 16)]
_b = [(bf16(1.5) | bf16(-0.5) << 16, bf16(2.0) | bf16(3.0) << 16, bf16(0.25) | bf16(1.0) << 16)]
case("fma_f16x2", U32, 1, [run(a(U32, *v), a(U32, fma_x2(*v, hval, hbits))) for v in _fx + _h])
case("fma_bf16x2", U32, 1, [run(a(U32, *v), a(U32, fma_x2(*v, bval, bf16))) for v in _fx + _b])
# copysign.f32 d, a, b: |b| with the sign of a
case("copysign", U32, 1, [run(a(U32, x, y), a(U32, (x & 0x80000000) | (y & 0x7FFFFFFF)))
                          for x, y in [(0x0BDA2A2C, 0xe31a8fd7), (0xBF800000, 0x40200000), (0x80000000, 0x3F800000)]])
# max.f16 d, b, a / min.f16: a NaN operand is ignored; min.NaN.f16: NaN if either is NaN
_h16 = [(0.0, NAN), (1.5, -2.0), (NAN, 3.0), (-65504.0, 65504.0)]


def fmin(x, y, nan=False):
    if math.isnan(x) or math.isnan(y):
        return NAN if nan or (math.isnan(x) and math.isnan(y)) else (y if math.isnan(x) else x)
    return min(x, y)


def fmax(x, y):
    if math.isnan(x) or math.isnan(y):
        return NAN if math.isnan(x) and math.isnan(y) else (y if math.isnan(x) else x)
    return max(x, y)


case("fmax", F16, 1, [run(a(F16, x, y), a(F16, fmax(x, y))) for x, y in _h16])
case("min_f16", F16, 1, [run(a(F16, x, y), a(F16, fmin(x, y))) for x, y in _h16])
case("min_nan_f16", F16, 1, [run(a(F16, x, y), a(F16, fmin(x, y, nan=True))) for x, y in _h16])
# sqrt.rn.ftz.f32: IEEE square root of the flushed input
case("sqrt_rn_ftz", F32, 1, [run(a(F32, x), a(F32, float(np.sqrt(F32(ftz32(f32(x)))))))
                             for x in (fbits(1), 2.0, 0.25, -0.0, INF, 1e-40)])
# sqrt.approx.f32 (<= 1 ulp here), rcp.approx.f32 (<= 1 ulp), special values exact
with np.errstate(all="ignore"):
    case("sqrt", F32, 1, [run(a(F32, x), a(F32, np.sqrt(F32(x)))) for x in (0.25, 2.0, 4.0, INF, -1.0)], ulps=1)
    case("rcp", F32, 1, [run(a(F32, x), a(F32, F32(1.0) / F32(x))) for x in (2.0, 3.0, -INF, 0.0, 1e30)], ulps=1)
# rcp.rz.f64: 1/x rounded toward zero (1/5: round-to-nearest would round up)
case("rcp_f64", F64, 1, [run(a(F64, x), a(F64, rz_f64(Fraction(1) / Fraction(x)))) for x in (5.0, -5.0, 3.0, 0.5, 7.0)])
# rsqrt.approx.f64: relative error well below 1e-10
case("rsqrt", F64, 1, [run(a(F64, x), a(F64, 1 / math.sqrt(x))) for x in (0.25, 2.0, 1e-300)], rtol=1e-10)
# ex2.approx.f32 / lg2.approx.f32: within 2 ulp (exact for these powers of two)
case("ex2", F32, 1, [run(a(F32, x), a(F32, 2.0 ** x)) for x in (10.0, -1.0, 0.5, -INF)], ulps=2)
case("lg2", F32, 1, [run(a(F32, x), a(F32, math.log2(x) if x > 0 else -INF)) for x in (512.0, 0.125, 10.0, 0.0)],
     ulps=2)
# sin.approx / cos.approx: absolute error 2^-20.5 on [-pi, pi]
case("sin", F32, 1, [run(a(F32, x), a(F32, math.sin(f32(x)))) for x in (math.pi / 2, 0.0, math.pi / 6, -2.0)],
     atol=2.0 ** -20)
case("cos", F32, 1, [run(a(F32, x), a(F32, math.cos(f32(x)))) for x in (math.pi, 0.0, math.pi / 3, -2.5)],
     atol=2.0 ** -20)
# tanh.approx.f32: relative error 2^-11
case("tanh", F32, 1, [run(a(F32, x), a(F32, math.tanh(x))) for x in (INF, 0.5, -2.0, 0.0)], rtol=2.0 ** -10)
# call_rnd: add.rp.f32 (x1 + y1) and add.rm.f32 (x2 + y2) in two .func
_nx = float(np.nextafter(F32(1.0), F32(2.0)))
case("call_rnd", F32, 2, [run(a(F32, 1.0, fbits(0x33800000), 1.0, fbits(0x33800000)), a(F32, _nx, 1.0)),
                          run(a(F32, -1.0, -fbits(0x33800000), -1.0, -fbits(0x33800000)), a(F32, -1.0, -_nx)),
                          run(a(F32, 1.5, 0.25, 1.5, 0.25), a(F32, 1.75, 1.75))])

# ------------------------------------------------------------- memory
for f in ("ld_st", "mov", "local_align", "stateful_ld_st_simple", "stateful_ld_st_ntid", "stateful_ld_st_ntid_chain",
          "stateful_ld_st_ntid_sub", "stateful_neg_offset", "b64tof64", "shared_variable", "shared_ptr_32"):
    case(f, U64, 1, [run(a(U64, 0x0123456789ABCDEF), a(U64, 0x0123456789ABCDEF)), run(a(U64, 111), a(U64, 111))])
# .extern .shared: ZLUDA launches with dynamic shared memory
case("extern_shared", U64, 1, [run(a(U64, 127), a(U64, 127)), run(a(U64, M64), a(U64, M64))], shared=64)
case("shared_ptr_take_address", U64, 1, [run(a(U64, 97815231), a(U64, 97815231))], shared=64)
case("extern_shared_call", U64, 1, [run(a(U64, 121), a(U64, 123)), run(a(U64, M64), a(U64, 1))], shared=64)
# shared_unify_*: out = in[0] + in[1] through a module / function .shared variable and the extern one
case("shared_unify_extern", U64, 1, [run(a(U64, 7681, 7682), a(U64, 15363))], shared=64)
case("shared_unify_local", U64, 1, [run(a(U64, 16752, 714), a(U64, 17466))], shared=64)
case("membar", S32, 1, [run(a(S32, 152731), a(S32, 152731))])
case("cvta", F32, 1, [run(a(F32, 3.0), a(F32, 3.0)), run(a(F32, -0.0), a(F32, -0.0))])
case("implicit_param", F32, 1, [run(a(F32, 34.5), a(F32, 34.5)), run(a(F32, NAN), a(F32, NAN))])
# ld.global.f32 into a .b64 register, st.global.f32 of it
case("ld_st_implicit", F32, 1, [run(a(F32, 0.5, 0.25), a(F32, 0.5))])
case("ld_st_offset", U32, 2, [run(a(U32, 1, 2), a(U32, 2, 1))])
case("reg_multi", U32, 2, [run(a(U32, 123, 456), a(U32, 123, 456))])
# ld.global.v2.u32 {x, y}, [in + 8]; x + y
case("non_scalar_ptr_offset", U32, 1, [run(a(U32, 1, 2, 3, 4), a(U32, 7)), run(a(U32, 0, 0, M32, 2), a(U32, 1))])
# ld.acquire.gpu.v2.u64, +1 each, st.release.gpu.v2.u64
case("atomics_128", U64, 2, [run(a(U64, 0xce16728dead1ceb0, 0xe7728e3c390b7fb7), a(U64, 0xce16728dead1ceb1, 0xe7728e3c390b7fb8)),
                             run(a(U64, M64, 0), a(U64, 0, 1))])
case("vector4", U32, 1, [run(a(U32, 1, 2, 3, 4), a(U32, 4))])
case("vector8", U32, 1, [run(a(U32, *range(1, 9)), a(U32, 8))])
# mov.b32 out, {0x5678, in}: the first element is the low half
case("vector_operand", U32, 1, [run(a(U16, 0x1234), a(U32, 0x12345678))])
# vector movs (sources read before any destination is written): bytes (b0..b3) -> (b2, b3, b0, b1)
case("vector_extract", U8, 4, [run(a(U8, 1, 2, 3, 4), a(U8, 3, 4, 1, 2))])
case("vector8_extract", U8, 8, [run(a(U8, *range(1, 9)), a(U8, 8, 1, 2, 3, 4, 5, 6, 7))])
# vector: .func on .v2.u32 parameters, both lanes x + y
case("vector", U32, 2, [run(a(U32, 1, 2), a(U32, 3, 3)), run(a(U32, M32, 2), a(U32, 1, 1))])
# reg_local: st.u64 [local_x], temp + 1 (a register-plus-immediate operand)
case("reg_local", U64, 1, [run(a(U64, 12), a(U64, 13))])
# module variables: .const b16 array, .global s32 / f32 arrays with partial initializers
case("const", U16, 4, [run(a(U16, 0), a(U16, 10, 20, 30, 40))])
case("global_array", U32, 1, [run(a(U32, 0xDEAD), a(U32, 1))])
case("global_array_f32", F32, 1, [run(a(U32, 0), a(F32, 0.0))])
# .const u64 constparams[2] = {x, y}: the initializer holds the .const addresses of x, y,
# which is what mov.u64 of the names gives: both xors are 0
case("const_ident", U64, 2, [run(a(U16, 0), a(U64, 0, 0))])
# a kernel parameter's address: ld.param through it gives the parameter itself
case("param_is_addressable", U64, 1, [run(a(U64, 0xDEAD), a(U64, 0))])
# cp.async 16 bytes with src-size 12: the last 4 bytes are zero-filled
case("cp_async", U32, 4, [run(a(U32, 0), a(U32, 1, 2, 3, 0))])
# atom.shared.add.u32 (old value, then the sum) / f32
case("atom_add", U32, 2, [run(a(U32, 2, 4), a(U32, 2, 6)), run(a(U32, M32, 2), a(U32, M32, 1))])
case("atom_add_float", F32, 2, [run(a(F32, 1.25, 0.5), a(F32, 1.25, 1.75)), run(a(F32, 1.0, 2.0 ** -30), a(F32, 1.0, 1.0))])
# atom.cas.b32 [in+4], compare in[0], new 100: old value, then memory
case("atom_cas", U32, 2, [run(a(U32, 91, 91), a(U32, 91, 100)), run(a(U32, 5, 6), a(U32, 6, 6))])


# atom.inc.u32 [in], 101 twice: old; new = old >= 101 ? 0 : old + 1
def inc(v, lim=101):
    return 0 if v >= lim else v + 1


case("atom_inc", U32, 3, [run(a(U32, x), a(U32, x, inc(x), inc(inc(x)))) for x in (100, 5, 200)])
# a .func with two register results (u32, pred): out = {x + 1, 123}
case("multiple_return", U32, 2, [run(a(U32, 5), a(U32, 6, 123)), run(a(U32, M32), a(U32, 0, 123))])

# ------------------------------------------------------------- special registers
# ntid.x added: every thread stores the same value
case("ntid", U32, 1, [run(a(U32, 3), a(U32, 4))])
case("ntid", U32, 1, [run(a(U32, 3), a(U32, 67))], block=64, id="ntid-64")
case("lanemask_lt", U32, 1, [run(a(U32, 41), a(U32, 42))])              # lane 0: %lanemask_lt = 0
case("warp_sz", U8, 1, [run(a(U8, 0), a(U8, 32))])
case("activemask", U32, 1, [run(a(U32, 0), a(U32, 1))])
case("activemask", U32, 1, [run(a(U32, 0), a(U32, 0x7F))], block=7, id="activemask-7")
case("nanosleep", U64, 1, [run(a(U64, 0), unchanged(U64, 1))])
case("createpolicy", U64, 1, [run(a(U64, 0), unchanged(U64, 1))])
# tid: every thread stores cvt.u8.u32(tid.x) at out + tid
case("tid", U8, 64, [run(None, a(U8, *range(64)))], block=64)

# ------------------------------------------------------------- warp-level (64 threads, two warps)
_T = np.arange(64)
_L = _T % 32
case("shfl_sync_up_b32_pred", U32, 64, [run(None, a(U32, *np.where(_L >= 3, _T - 3, _T + 1000)))], block=64)
case("shfl_sync_down_b32_pred", U32, 64, [run(None, a(U32, *np.where(_L + 3 <= 31, _T + 3, _T + 1000)))], block=64)
case("shfl_sync_bfly_b32_pred", U32, 64, [run(None, a(U32, *(_T ^ 3)))], block=64)
case("shfl_sync_idx_b32_pred", U32, 64, [run(None, a(U32, *(_T - _L + 12)))], block=64)


# shfl with c = ((32 - width) << 8) | clamp: the ISA's segmask / maxLane / minLane
def shfl(mode, lane, bval, c):
    bval &= 31
    seg, cval = (c >> 8) & 31, c & 31
    max_lane = (lane & seg) | (cval & ~seg & 31)
    min_lane = lane & seg
    if mode == "up":
        j = lane - bval
        ok = j >= max_lane
    elif mode == "down":
        j = lane + bval
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        ok = j <= max_lane
    else:
        j = min_lane | (bval & ~seg & 31)
        ok = j <= max_lane
    return (j if ok else lane), ok


def shfl_out(mode, deltas, c, tid):
    lane = tid % 32
    out = []
    for d in deltas:
        j, ok = shfl(mode, lane, d, c)
        out.append(tid - lane + j + (0 if ok else 1000))
    return out


for _mode, _c in (("up", 0), ("down", 31), ("bfly", 31), ("idx", 31)):
    _vals = np.array([shfl_out(_mode, (32, 33, 63), _c, t) for t in range(64)])     # [tid, k]
    case(f"shfl_sync_{_mode}_dynamic_delta_b32_pred", U32, 192, [run(None, a(U32, *_vals.T.reshape(-1)))], block=64)
_mode_sum = [sum(shfl(m, t % 32, 3, c)[0] + t - t % 32 for m, c in
                 (("up", 7680), ("down", 7199), ("bfly", 6175), ("idx", 4127))) for t in range(64)]
case("shfl_sync_mode_b32", U32, 64, [run(None, a(U32, *_mode_sum))], block=64)
# vote.sync.all (lane 0 does not vote and keeps 0), vote.sync.any, vote.sync.ballot
case("vote_all", U32, 64, [run(None, a(U32, *(_L != 0)))], block=64)
case("vote_all_sub", U32, 64, [run(None, a(U32, *(_L != 0)))], block=64)
case("vote_any", U32, 64, [run(None, a(U32, *(_T < 32)))], block=64)
case("vote_ballot", U32, 64, [run(None, a(U32, *np.where(_T < 32, 0, 0xFFFFFFFC)))], block=64)
case("vote_ballot_nosync", U32, 64, [run(None, a(U32, *np.where(_T < 32, 0, 0xFFFFFFFC)))], block=64)
# match.any.sync.b32 on tid & 1
case("match_sync", U32, 64, [run(None, a(U32, *np.where(_T % 2 == 0, 0x55555555, 0xAAAAAAAA)))], block=64)


# redux.sync.{add,min,max} over each warp; the partial one over the even lanes only
def _warp(t):
    return range(t - t % 32, t - t % 32 + 32)


case("redux_sync_op_s32", S32, 64, [run(None, a(S32, *[sum(w - 5 for w in _warp(t)) + min(w - 5 for w in _warp(t)) +
                                                     max(w - 5 for w in _warp(t)) for t in range(64)]))], block=64)
case("redux_sync_op_u32", U32, 64, [run(None, a(U32, *[sum(_warp(t)) + min(_warp(t)) + max(_warp(t))
                                                     for t in range(64)]))], block=64)
case("redux_sync_add_u32_partial", U32, 64, [run(None, a(U32, *[sum(w for w in _warp(t) if w % 2 == 0) if t % 2 == 0 else 0
                                                              for t in range(64)]))], block=64)
# bar.red.{and,or}.pred across the CTA: AND(even) = 0, OR(even) = 1, AND(1) = 1, OR(0) = 0,
# AND(!1) = 0 -> 2 for every thread; with a single thread AND(even) is 1 too -> 3
case("bar_red_and_pred", U32, 64, [run(None, a(U32, *[2] * 64))], block=64)
case("bar_red_and_pred", U32, 1, [run(None, a(U32, 3))], block=1, id="bar_red_and_pred-1")
# ldmatrix.x2 (32 threads): thread t gets values_s[t] and values_s[32 + t] (= values_g)
_VG = [340, 122, 527, 693, 958, 394, 668, 432, 646, 354, 761, 449, 252, 778, 218, 800,
       656, 493, 659, 787, 672, 203, 343, 845, 318, 286, 206, 253, 194, 489, 29, 323,
       7, 619, 998, 930, 773, 749, 172, 465, 937, 96, 88, 621, 909, 298, 283, 286,
       779, 290, 429, 930, 25, 687, 423, 200, 918, 10, 515, 248, 158, 911, 270, 459]
case("ldmatrix", U32, 64, [run(None, a(U32, *[v for t in range(32) for v in (_VG[t], _VG[32 + t])]))], block=32)

# vshr.u32.u32.u32.clamp.add: (a >> min(b, 32)) + c, then with b = 32
case("vshr_clamp", U32, 2, [run(a(U32, x, b, c), a(U32, ((x >> min(b, 32)) + c) & M32, c))
                            for x, b, c in [(0x8e2da590, 16, 0x248a9f70), (0x100, 4, 5)]])

# kernels that must stop with a trap
TRAPS = ["trap", "noreturn"]

# ------------------------------------------------------------- known executor bugs
# (strict xfails: each turns into a failure once fixed, so the mark is removed then)
BUGS = {
}
for _c in CASES:
    if _c.name in BUGS:
        _c.bug = BUGS[_c.name]
