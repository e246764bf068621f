"""Integer and bit-manipulation semantics of the executor (PTX ISA 9.7.1, 9.7.7,
9.7.8), each checked against a reference written from the ISA pseudocode."""
from __future__ import annotations

import numpy as np
import pytest

from executor_harness import run_op

RNG = np.random.default_rng(1234)
EDGE32 = [0, 1, -1, 2, -2, 0x7FFFFFFF, -0x80000000, 31, 32, 33, 64, 255, 256, 0x12345678]


def ints(n=64, bits=32, signed=True):
    """Edge values plus random ones, as an object array of Python ints."""
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    edge = [e for e in EDGE32 if lo <= e <= hi] + [lo, hi]
    r = [lo + int(x) % (hi - lo + 1) for x in RNG.integers(0, 2**63 - 1, size=n - len(edge))]
    return np.array(edge + r, dtype=object)


def wrap(x, bits, signed):
    x = int(x) & ((1 << bits) - 1)
    return x - (1 << bits) if signed and x >> (bits - 1) else x


def check(got, ref, dtype):
    """Compare with Python-int references taken modulo the width of dtype."""
    size = np.dtype(dtype).itemsize
    vals = [int(x) & ((1 << (8 * size)) - 1) for x in ref]
    want = np.array(vals, dtype=f"u{size}").view(dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


S, U = np.int32, np.uint32


# ------------------------------------------------------------ arithmetic
def test_add_sub_wrap_and_sat():
    a, b = ints(), ints()[::-1].copy()
    check(run_op("add.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"),
          [wrap(x + y, 32, True) for x, y in zip(a, b)], S)
    check(run_op("sub.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"),
          [wrap(x - y, 32, True) for x, y in zip(a, b)], S)
    sat = [max(-2**31, min(2**31 - 1, x + y)) for x, y in zip(a, b)]
    check(run_op("add.sat.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"), sat, S)
    sat = [max(-2**31, min(2**31 - 1, x - y)) for x, y in zip(a, b)]
    check(run_op("sub.sat.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"), sat, S)


def test_carry_chain_64bit_add_and_sub():
    a = ints(64, 64, False).astype(np.uint64)
    b = ints(64, 64, False)[::-1].copy().astype(np.uint64)
    body = """.reg .b32 %al, %ah, %bl, %bh, %dl, %dh;
  mov.b64 {%al, %ah}, %a;
  mov.b64 {%bl, %bh}, %b;
  add.cc.u32 %dl, %al, %bl;
  addc.u32 %dh, %ah, %bh;
  mov.b64 %d, {%dl, %dh};"""
    got = run_op(body, {"a": a, "b": b}, a="u64", b="u64", d="u64")
    check(got, [(int(x) + int(y)) & (2**64 - 1) for x, y in zip(a, b)], np.uint64)
    got = run_op(body.replace("add.cc", "sub.cc").replace("addc", "subc"),
                 {"a": a, "b": b}, a="u64", b="u64", d="u64")
    check(got, [(int(x) - int(y)) & (2**64 - 1) for x, y in zip(a, b)], np.uint64)


def test_mad_cc_madc_wide_product():
    a, b = ints(64, 32, False), ints(64, 32, False)[::-1].copy()
    body = """.reg .b32 %lo, %hi;
  mad.lo.cc.u32 %lo, %a, %b, %a;
  madc.hi.u32 %hi, %a, %b, 0;
  mov.b64 %d, {%lo, %hi};"""
    got = run_op(body, {"a": a, "b": b}, a="u32", b="u32", d="u64")
    check(got, [(x * y + x) & (2**64 - 1) for x, y in zip(a, b)], np.uint64)


@pytest.mark.parametrize("t,signed", [("s32", True), ("u32", False)])
def test_mul_lo_hi_wide(t, signed):
    a, b = ints(64, 32, signed), ints(64, 32, signed)[::-1].copy()
    dt = S if signed else U
    check(run_op(f"mul.lo.{t} %d, %a, %b;", {"a": a, "b": b}, a=t, b=t, d=t),
          [wrap(x * y, 32, signed) for x, y in zip(a, b)], dt)
    check(run_op(f"mul.hi.{t} %d, %a, %b;", {"a": a, "b": b}, a=t, b=t, d=t),
          [wrap((x * y) >> 32, 32, signed) for x, y in zip(a, b)], dt)
    wt = t[0] + "64"
    check(run_op(f"mul.wide.{t} %d, %a, %b;", {"a": a, "b": b}, a=t, b=t, d=wt),
          [x * y for x, y in zip(a, b)], np.int64 if signed else np.uint64)
    c = ints(64, 64, signed)
    check(run_op(f"mad.wide.{t} %d, %a, %b, %c;", {"a": a, "b": b, "c": c}, a=t, b=t, c=wt, d=wt),
          [wrap(x * y + z, 64, signed) for x, y, z in zip(a, b, c)], np.int64 if signed else np.uint64)


def test_mul_hi_u64_and_wide_s16():
    a, b = ints(64, 64, False), ints(64, 64, False)[::-1].copy()
    check(run_op("mul.hi.u64 %d, %a, %b;", {"a": a.astype(np.uint64), "b": b.astype(np.uint64)},
                 a="u64", b="u64", d="u64"), [(x * y) >> 64 for x, y in zip(a, b)], np.uint64)
    a, b = ints(64, 16), ints(64, 16)[::-1].copy()
    check(run_op("mul.wide.s16 %d, %a, %b;", {"a": a, "b": b}, a="s16", b="s16", d="s32"),
          [x * y for x, y in zip(a, b)], S)


def test_mad_hi_sat():
    a, b, c = ints(), ints()[::-1].copy(), ints()
    ref = [max(-2**31, min(2**31 - 1, ((x * y) >> 32) + z)) for x, y, z in zip(a, b, c)]
    check(run_op("mad.hi.sat.s32 %d, %a, %b, %c;", {"a": a, "b": b, "c": c},
                 a="s32", b="s32", c="s32", d="s32"), ref, S)


def test_mul24_mad24():
    a, b, c = ints(), ints()[::-1].copy(), ints()

    def s24(x):
        return wrap(x, 24, True)
    ref = [wrap(s24(x) * s24(y), 32, True) for x, y in zip(a, b)]
    check(run_op("mul24.lo.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"), ref, S)
    ref = [wrap((s24(x) * s24(y)) >> 16, 32, True) for x, y in zip(a, b)]
    check(run_op("mul24.hi.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"), ref, S)
    au, bu = a & 0xFFFFFFFF, b & 0xFFFFFFFF
    ref = [wrap((x & 0xFFFFFF) * (y & 0xFFFFFF) + z, 32, False) for x, y, z in zip(au, bu, c)]
    check(run_op("mad24.lo.u32 %d, %a, %b, %c;", {"a": au, "b": bu, "c": c & 0xFFFFFFFF},
                 a="u32", b="u32", c="u32", d="u32"), ref, U)


def test_sad():
    a, b, c = ints(), ints()[::-1].copy(), ints()
    ref = [wrap(z + abs(x - y), 32, True) for x, y, z in zip(a, b, c)]
    check(run_op("sad.s32 %d, %a, %b, %c;", {"a": a, "b": b, "c": c},
                 a="s32", b="s32", c="s32", d="s32"), ref, S)


def test_div_rem_signed_unsigned_and_zero():
    a = ints()
    b = np.array([0, -1, 1, 3, -3, 7, 0x7FFFFFFF] * 10)[:len(a)]
    def q(x, y, signed):
        if y == 0:
            return -1
        if signed and x == -2**31 and y == -1:
            return x
        r = abs(x) // abs(y)
        return r if (x < 0) == (y < 0) else -r
    def rem(x, y):
        if y == 0:
            return x
        return x - q(x, y, True) * y
    check(run_op("div.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"),
          [q(x, y, True) for x, y in zip(a, b)], S)
    check(run_op("rem.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"),
          [rem(x, y) for x, y in zip(a, b)], S)
    au, bu = a & 0xFFFFFFFF, b & 0xFFFFFFFF
    check(run_op("div.u32 %d, %a, %b;", {"a": au, "b": bu}, a="u32", b="u32", d="u32"),
          [x // y if y else 0xFFFFFFFF for x, y in zip(au, bu)], U)
    check(run_op("rem.u32 %d, %a, %b;", {"a": au, "b": bu}, a="u32", b="u32", d="u32"),
          [x % y if y else x for x, y in zip(au, bu)], U)


def test_abs_neg_min_max():
    a, b = ints(), ints()[::-1].copy()
    check(run_op("abs.s32 %d, %a;", {"a": a}, a="s32", d="s32"), [wrap(abs(x), 32, True) for x in a], S)
    check(run_op("neg.s32 %d, %a;", {"a": a}, a="s32", d="s32"), [wrap(-x, 32, True) for x in a], S)
    check(run_op("min.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"),
          np.minimum(a, b), S)
    au, bu = a & 0xFFFFFFFF, b & 0xFFFFFFFF
    check(run_op("max.u32 %d, %a, %b;", {"a": au, "b": bu}, a="u32", b="u32", d="u32"),
          np.maximum(au, bu), U)


# ------------------------------------------------------------------ bits
def test_logic_ops():
    a, b, c = ints(), ints()[::-1].copy(), ints()
    for op, fn in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
        check(run_op(f"{op}.b32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="s32"),
              fn(a, b), S)
    check(run_op("not.b32 %d, %a;", {"a": a}, a="s32", d="s32"), ~a, S)
    check(run_op("cnot.b32 %d, %a;", {"a": a}, a="s32", d="s32"), (a == 0).astype(int), S)
    lut = 0x96     # a ^ b ^ c
    check(run_op(f"lop3.b32 %d, %a, %b, %c, {lut};", {"a": a, "b": b, "c": c},
                 a="s32", b="s32", c="s32", d="s32"), a ^ b ^ c, S)
    lut = 0xE8     # majority
    check(run_op(f"lop3.b32 %d, %a, %b, %c, {lut};", {"a": a, "b": b, "c": c},
                 a="s32", b="s32", c="s32", d="s32"), (a & b) | (a & c) | (b & c), S)


def test_shifts_clamp_large_amounts():
    a = ints()
    n = np.array([0, 1, 5, 31, 32, 33, 100, 0xFFFFFFFF] * 8)[:len(a)]
    check(run_op("shl.b32 %d, %a, %b;", {"a": a, "b": n}, a="s32", b="u32", d="s32"),
          [wrap(x << s, 32, True) if s < 32 else 0 for x, s in zip(a, n)], S)
    check(run_op("shr.s32 %d, %a, %b;", {"a": a, "b": n}, a="s32", b="u32", d="s32"),
          [x >> min(s, 31) for x, s in zip(a, n)], S)
    au = a & 0xFFFFFFFF
    check(run_op("shr.u32 %d, %a, %b;", {"a": au, "b": n}, a="u32", b="u32", d="u32"),
          [x >> s if s < 32 else 0 for x, s in zip(au, n)], U)
    a64 = ints(64, 64)
    check(run_op("shl.b64 %d, %a, %b;", {"a": a64, "b": n}, a="s64", b="u32", d="s64"),
          [wrap(x << s, 64, True) if s < 64 else 0 for x, s in zip(a64, n)], np.int64)


@pytest.mark.parametrize("mode", ["clamp", "wrap"])
def test_funnel_shifts(mode):
    a, b = ints() & 0xFFFFFFFF, ints()[::-1] & 0xFFFFFFFF
    n = np.array([0, 1, 8, 31, 32, 33, 63, 200] * 8)[:len(a)]
    def amt(c):
        return min(c, 32) if mode == "clamp" else c & 31
    ref_l = [((((y << 32) | x) << amt(c)) >> 32) & 0xFFFFFFFF for x, y, c in zip(a, b, map(int, n))]
    ref_r = [(((y << 32) | x) >> amt(c)) & 0xFFFFFFFF for x, y, c in zip(a, b, map(int, n))]
    check(run_op(f"shf.l.{mode}.b32 %d, %a, %b, %c;", {"a": a, "b": b, "c": n},
                 a="b32", b="b32", c="u32", d="b32"), ref_l, U)
    check(run_op(f"shf.r.{mode}.b32 %d, %a, %b, %c;", {"a": a, "b": b, "c": n},
                 a="b32", b="b32", c="u32", d="b32"), ref_r, U)


def test_popc_clz_brev_bfind():
    a = ints() & 0xFFFFFFFF
    check(run_op("popc.b32 %d, %a;", {"a": a}, a="b32", d="u32"), [bin(x).count("1") for x in a], U)
    check(run_op("clz.b32 %d, %a;", {"a": a}, a="b32", d="u32"), [32 - int(x).bit_length() for x in a], U)
    check(run_op("brev.b32 %d, %a;", {"a": a}, a="b32", d="b32"),
          [int(f"{x:032b}"[::-1], 2) for x in a], U)
    check(run_op("bfind.u32 %d, %a;", {"a": a}, a="u32", d="u32"),
          [int(x).bit_length() - 1 if x else 0xFFFFFFFF for x in a], U)
    s = ints()
    def bfs(x):
        y = ~x if x < 0 else x
        return y.bit_length() - 1 if y else 0xFFFFFFFF
    check(run_op("bfind.s32 %d, %a;", {"a": s}, a="s32", d="u32"), [bfs(x) for x in s], U)
    check(run_op("bfind.shiftamt.u32 %d, %a;", {"a": a}, a="u32", d="u32"),
          [31 - (int(x).bit_length() - 1) if x else 0xFFFFFFFF for x in a], U)
    a64 = ints(64, 64, False).astype(np.uint64)
    check(run_op("popc.b64 %d, %a;", {"a": a64}, a="b64", d="u32"), [bin(int(x)).count("1") for x in a64], U)
    check(run_op("clz.b64 %d, %a;", {"a": a64}, a="b64", d="u32"), [64 - int(x).bit_length() for x in a64], U)


def bfe_ref(a, pos, ln, bits, signed):
    msb = bits - 1
    pos, ln = int(pos) & 0xFF, int(ln) & 0xFF
    abits = int(a) & ((1 << bits) - 1)
    sbit = 0 if (not signed or ln == 0) else (abits >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(bits):
        bit = (abits >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return wrap(d, bits, signed)


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
def test_bfe(t):
    bits, signed = int(t[1:]), t[0] == "s"
    a = ints(96, bits, signed)
    pos = RNG.integers(0, 80, size=96)
    ln = RNG.integers(0, 80, size=96)
    pos[:4], ln[:4] = [0, 300, 31, 40], [0, 8, 300, 300]
    got = run_op(f"bfe.{t} %d, %a, %b, %c;", {"a": a, "b": pos, "c": ln}, a=t, b="u32", c="u32", d=t)
    check(got, [bfe_ref(x, p, n, bits, signed) for x, p, n in zip(a, pos, ln)],
          np.int64 if bits == 64 and signed else np.uint64 if bits == 64 else (S if signed else U))


@pytest.mark.parametrize("t", ["b32", "b64"])
def test_bfi(t):
    bits = int(t[1:])
    a, b = ints(96, bits, False), ints(96, bits, False)[::-1].copy()
    pos, ln = RNG.integers(0, 80, size=96), RNG.integers(0, 80, size=96)
    pos[:3], ln[:3] = [300, 5, 0], [4, 0, 300]

    def ref(x, y, p, n):
        p, n = int(p) & 0xFF, int(n) & 0xFF
        f = int(y)
        for i in range(n):
            if p + i > bits - 1:
                break
            f = (f & ~(1 << (p + i))) | (((int(x) >> i) & 1) << (p + i))
        return f
    dt = np.uint64 if bits == 64 else U
    got = run_op(f"bfi.{t} %d, %a, %b, %c, %e;",
                 {"a": a.astype(dt), "b": b.astype(dt), "c": pos, "e": ln}, a=t, b=t, c="u32", e="u32", d=t)
    check(got, [ref(x, y, p, n) for x, y, p, n in zip(a, b, pos, ln)], dt)


def prmt_ref(a, b, c, mode):
    tmp = (int(b) << 32) | int(a)
    byte = [(tmp >> (8 * i)) & 0xFF for i in range(8)]
    table = {"f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
             "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
             "rc8": [[0] * 4, [1] * 4, [2] * 4, [3] * 4],
             "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
             "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
             "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]]}
    d = 0
    for k in range(4):
        if mode is None:
            sel = (int(c) >> (4 * k)) & 0xF
            v = byte[sel & 7]
            if sel & 8:
                v = 0xFF if v & 0x80 else 0
        else:
            v = byte[table[mode][int(c) & 3][k]]
        d |= v << (8 * k)
    return d


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
def test_prmt(mode):
    a, b = ints() & 0xFFFFFFFF, ints()[::-1] & 0xFFFFFFFF
    c = RNG.integers(0, 1 << 16, size=len(a))
    m = f".{mode}" if mode else ""
    got = run_op(f"prmt.b32{m} %d, %a, %b, %c;", {"a": a, "b": b, "c": c}, a="b32", b="b32", c="b32", d="b32")
    check(got, [prmt_ref(x, y, z, mode) for x, y, z in zip(a, b, c)], U)


def test_bmsk():
    a = RNG.integers(0, 40, size=64)
    b = RNG.integers(0, 40, size=64)
    def ref(x, y, clamp):
        if clamp:
            x, y = min(x, 32), min(y, 32)
        else:
            x, y = x & 31, y & 31
        end = min(x + y, 32)
        return ((1 << end) - 1) ^ ((1 << x) - 1) if x < 32 else 0
    check(run_op("bmsk.clamp.b32 %d, %a, %b;", {"a": a, "b": b}, a="u32", b="u32", d="b32"),
          [ref(x, y, True) for x, y in zip(a, b)], U)
    check(run_op("bmsk.wrap.b32 %d, %a, %b;", {"a": a, "b": b}, a="u32", b="u32", d="b32"),
          [ref(x, y, False) for x, y in zip(a, b)], U)


# ------------------------------------------------------ compare / select
INT_CMPS = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
            "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}


@pytest.mark.parametrize("op", sorted(INT_CMPS))
def test_setp_int(op):
    a, b = ints(), ints()[::-1].copy()
    b[:5] = a[:5]
    got = run_op(f"setp.{op}.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="pred")
    check(got, [INT_CMPS[op](x, y) for x, y in zip(a, b)], np.uint8)
    au, bu = a & 0xFFFFFFFF, b & 0xFFFFFFFF
    uop = {"lt": "lo", "le": "ls", "gt": "hi", "ge": "hs"}.get(op, op)
    got = run_op(f"setp.{uop}.u32 %d, %a, %b;", {"a": au, "b": bu}, a="u32", b="u32", d="pred")
    check(got, [INT_CMPS[op](x, y) for x, y in zip(au, bu)], np.uint8)


def test_setp_pair_and_boolop():
    a, b = ints(), ints()[::-1].copy()
    c = RNG.integers(0, 2, size=len(a))
    d, q = run_op("setp.lt.and.s32 %d|%q, %a, %b, %c;", {"a": a, "b": b, "c": c},
                  a="s32", b="s32", c="pred", d="pred", q="pred")
    check(d, [(x < y) and z for x, y, z in zip(a, b, c)], np.uint8)
    check(q, [(not x < y) and z for x, y, z in zip(a, b, c)], np.uint8)
    d = run_op("setp.ge.xor.s32 %d, %a, %b, !%c;", {"a": a, "b": b, "c": c},
               a="s32", b="s32", c="pred", d="pred")
    check(d, [(x >= y) ^ (not z) for x, y, z in zip(a, b, c)], np.uint8)


def test_selp_slct_set():
    a, b, c = ints(), ints()[::-1].copy(), ints()
    p = RNG.integers(0, 2, size=len(a))
    check(run_op("selp.b32 %d, %a, %b, %c;", {"a": a, "b": b, "c": p}, a="s32", b="s32", c="pred", d="s32"),
          np.where(p != 0, a, b), S)
    check(run_op("slct.s32.s32 %d, %a, %b, %c;", {"a": a, "b": b, "c": c}, a="s32", b="s32", c="s32", d="s32"),
          np.where(c >= 0, a, b), S)
    check(run_op("set.lt.u32.s32 %d, %a, %b;", {"a": a, "b": b}, a="s32", b="s32", d="u32"),
          np.where(a < b, 0xFFFFFFFF, 0), U)


# ------------------------------------------------------------------- cvt
@pytest.mark.parametrize("dt,st,sat", [("s32", "s16", ""), ("u32", "u16", ""), ("s64", "s32", ""),
                                       ("u64", "s32", ""), ("s16", "s32", ""), ("u8", "s32", ".sat"),
                                       ("s8", "s32", ".sat"), ("u32", "s32", ".sat"),
                                       ("s32", "u32", ".sat"), ("u16", "s64", ".sat")])
def test_cvt_int(dt, st, sat):
    sbits, dbits = int(st[1:]), int(dt[1:])
    a = ints(64, sbits, st[0] == "s")
    got = run_op(f"cvt{sat}.{dt}.{st} %d, %a;", {"a": a}, a=st, d=dt)
    lo = -(1 << (dbits - 1)) if dt[0] == "s" else 0
    hi = (1 << (dbits - 1)) - 1 if dt[0] == "s" else (1 << dbits) - 1
    ref = [min(max(x, lo), hi) if sat else wrap(x, dbits, dt[0] == "s") for x in a]
    from executor_harness import NP
    check(got, ref, NP[dt])
