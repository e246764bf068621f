"""Floating-point semantics of the executor (PTX ISA 9.7.3 - 9.7.5, cvt 9.7.9.21):
IEEE f32/f64 in every rounding mode, .ftz, .sat, f16/bf16 and their packed
forms, min/max, the conversions. Exact results are computed with
fractions.Fraction and rounded once (tests/cuda/reference_ops.py helpers);
``.approx`` instructions are compared with the documented tolerance only."""
from __future__ import annotations

import math
import os
import sys
from fractions import Fraction

import numpy as np
import pytest

from executor_harness import run_op

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "cuda"))
from reference_ops import _round_to  # noqa: E402  (exact rounding helper)

RNG = np.random.default_rng(7)
MODES = {"rn": "rn", "rz": "rz", "rp": "ru", "rm": "rd"}
FMT = {"f32": (24, -126, 127), "f64": (53, -1022, 1023), "f16": (11, -14, 15), "bf16": (8, -126, 127)}
NPF = {"f32": np.float32, "f64": np.float64, "f16": np.float16}


def special_f32(n=96):
    vals = [0.0, -0.0, 1.0, -1.0, 1.5, 3.0, 1e-40, -1e-40, 1.1754944e-38, 3.4e38, -3.4e38,
            np.inf, -np.inf, 0.1, 2.0 ** -126, 7.0, 1e-3]
    r = (RNG.standard_normal(n - len(vals)) * 10.0 ** RNG.integers(-8, 8, n - len(vals)))
    return np.array(vals + list(r), dtype=np.float32)


def special_f64(n=96):
    vals = [0.0, -0.0, 1.0, -1.0, 1.5, 3.0, 5e-324, -1e-310, 1.7e308, np.inf, -np.inf, 0.1, 1e-3]
    r = RNG.standard_normal(n - len(vals)) * 10.0 ** RNG.integers(-30, 30, n - len(vals))
    return np.array(vals + list(r), dtype=np.float64)


def rnd(q, t, mode="rn"):
    """Exact rational q rounded to format t (a Python float)."""
    if isinstance(q, float):
        return q
    r = _round_to(q, *FMT[t], MODES[mode])
    return float(r)


def exact(x):
    x = float(x)
    return x if not math.isfinite(x) else Fraction(x)


def same(got, want, dtype):
    """Bitwise equality of float arrays, NaN matching NaN."""
    got = np.asarray(got, dtype)
    want = np.asarray(want, dtype)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (got[np.isnan(got) != nan], want[np.isnan(got) != nan])
    np.testing.assert_array_equal(got[~nan].view(f"u{got.itemsize}"), want[~nan].view(f"u{got.itemsize}"))


def ref_binop(op, a, b, t, mode):
    out = []
    for x, y in zip(a, b):
        fx, fy = float(x), float(y)
        if not (math.isfinite(fx) and math.isfinite(fy)) or (op == "div" and fy == 0):
            with np.errstate(all="ignore"):
                r = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](
                    NPF[t](x), NPF[t](y))
            out.append(r)
            continue
        q = {"add": lambda: exact(fx) + exact(fy), "sub": lambda: exact(fx) - exact(fy),
             "mul": lambda: exact(fx) * exact(fy), "div": lambda: exact(fx) / exact(fy)}[op]()
        r = rnd(q, t, mode)
        if r == 0:          # sign of an exact zero result
            if op == "mul" or op == "div":
                r = math.copysign(0.0, fx) * math.copysign(1.0, fy)
            elif q == 0:
                neg = (fx == 0 and fy == 0 and math.copysign(1, fx) < 0 and
                       math.copysign(1, fy if op == "add" else -fy) < 0)
                r = -0.0 if neg or (mode == "rm" and not (fx == 0 and fy == 0)) else 0.0
            else:
                r = math.copysign(0.0, float(q))
        out.append(r)
    return np.array(out, dtype=NPF[t])


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_binary_ieee_rounding(t, op, mode):
    a = special_f32() if t == "f32" else special_f64()
    b = np.roll(a, 7)
    got = run_op(f"{op}.{mode}.{t} %d, %a, %b;", {"a": a, "b": b}, a=t, b=t, d=t, modes=("full",))
    same(got, ref_binop(op, a, b, t, mode), NPF[t])


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_fma_exact(t, mode):
    a = special_f32(64) if t == "f32" else special_f64(64)
    b, c = np.roll(a, 5), np.roll(a, 11)
    want = []
    for x, y, z in zip(a, b, c):
        if not all(math.isfinite(float(v)) for v in (x, y, z)):
            with np.errstate(all="ignore"):
                want.append(NPF[t](x) * NPF[t](y) + NPF[t](z))
            continue
        q = exact(x) * exact(y) + exact(z)
        r = rnd(q, t, mode)
        if r == 0 and q == 0:
            p_neg = (math.copysign(1, float(x)) * math.copysign(1, float(y))) < 0
            r = -0.0 if (p_neg and math.copysign(1, float(z)) < 0) or mode == "rm" else 0.0
        elif r == 0:
            r = math.copysign(0.0, float(q))
        want.append(r)
    got = run_op(f"fma.{mode}.{t} %d, %a, %b, %c;", {"a": a, "b": b, "c": c}, a=t, b=t, c=t, d=t,
                 modes=("full",))
    same(got, np.array(want, NPF[t]), NPF[t])


def test_ftz_and_sat():
    a = np.array([1e-40, -1e-40, 1.2e-38, 0.5, 2.0, -3.0, np.nan, 1.0], np.float32)
    b = np.array([1e-40, 0.0, 1.2e-38, 0.25, 1.0, 1.0, 1.0, 0.0], np.float32)
    got = run_op("add.ftz.f32 %d, %a, %b;", {"a": a, "b": b}, a="f32", b="f32", d="f32")
    # subnormal inputs are flushed to signed zero: -0 + +0 = +0 (IEEE)
    want = np.array([0.0, 0.0, np.float32(1.2e-38) * 2, 0.75, 3.0, -2.0, np.nan, 1.0], np.float32)
    same(got, want, np.float32)
    got = run_op("add.sat.f32 %d, %a, %b;", {"a": a, "b": b}, a="f32", b="f32", d="f32")
    want = np.array([np.float32(1e-40) * 2, 0.0, np.float32(1.2e-38) * 2, 0.75, 1.0, 0.0, 0.0, 1.0], np.float32)
    np.testing.assert_array_equal(got, want)
    got = run_op("mul.ftz.f32 %d, %a, %b;", {"a": a, "b": b}, a="f32", b="f32", d="f32")
    assert got[0] == 0 and got[2] == 0 and got[3] == 0.125   # subnormal results flushed


def test_abs_neg_min_max_copysign():
    a = special_f32()
    b = np.roll(a, 3)
    same(run_op("abs.f32 %d, %a;", {"a": a}, a="f32", d="f32"), np.abs(a), np.float32)
    same(run_op("neg.f32 %d, %a;", {"a": a}, a="f32", d="f32"), -a, np.float32)
    a2 = a.copy()
    a2[5] = np.nan
    got = run_op("min.f32 %d, %a, %b;", {"a": a2, "b": b}, a="f32", b="f32", d="f32")
    same(got, np.fmin(a2, b), np.float32)
    got = run_op("max.f32 %d, %a, %b;", {"a": a2, "b": b}, a="f32", b="f32", d="f32")
    same(got, np.fmax(a2, b), np.float32)
    got = run_op("max.NaN.f32 %d, %a, %b;", {"a": a2, "b": b}, a="f32", b="f32", d="f32")
    assert np.isnan(got[5])
    got = run_op("copysign.f32 %d, %a, %b;", {"a": a, "b": b}, a="f32", b="f32", d="f32")
    same(got, np.copysign(b, a), np.float32)


def test_sqrt_rcp_rn_exact():
    a = np.abs(special_f32())
    got = run_op("sqrt.rn.f32 %d, %a;", {"a": a}, a="f32", d="f32")
    same(got, np.sqrt(a), np.float32)
    got = run_op("rcp.rn.f32 %d, %a;", {"a": a}, a="f32", d="f32")
    with np.errstate(all="ignore"):
        same(got, np.float32(1) / a, np.float32)
    d = np.abs(special_f64())
    same(run_op("sqrt.rn.f64 %d, %a;", {"a": d}, a="f64", d="f64"), np.sqrt(d), np.float64)


APPROX = [("sin.approx.f32", np.sin, 0.0, 2e-6), ("cos.approx.f32", np.cos, 0.0, 2e-6),
          ("ex2.approx.f32", np.exp2, 2e-6, 0.0), ("lg2.approx.f32", np.log2, 0.0, 2e-6),
          ("rsqrt.approx.f32", lambda x: 1 / np.sqrt(x), 2e-6, 0.0),
          ("rcp.approx.f32", lambda x: 1 / x, 2e-6, 0.0), ("tanh.approx.f32", np.tanh, 0.0, 2e-3),
          ("sqrt.approx.f32", np.sqrt, 2e-6, 0.0)]


@pytest.mark.parametrize("op,fn,rtol,atol", APPROX, ids=[x[0] for x in APPROX])
def test_approx_functions_within_tolerance(op, fn, rtol, atol):
    a = np.linspace(0.1, 3.0, 64, dtype=np.float32)
    got = run_op(f"{op} %d, %a;", {"a": a}, a="f32", d="f32")
    np.testing.assert_allclose(got, fn(a.astype(np.float64)).astype(np.float32), rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu",
                                "gtu", "geu", "num", "nan"])
def test_setp_float_ordered_unordered(op):
    a = special_f32(48)
    a[::5] = np.nan
    b = np.roll(a, 2)
    b[:6] = a[:6]
    got = run_op(f"setp.{op}.f32 %d, %a, %b;", {"a": a, "b": b}, a="f32", b="f32", d="pred")
    with np.errstate(invalid="ignore"):
        un = np.isnan(a) | np.isnan(b)
        base = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}
        if op in base:
            want = base[op] & ~un
        elif op in ("num", "nan"):
            want = ~un if op == "num" else un
        else:
            want = base[op[:-1]] | un
    np.testing.assert_array_equal(got.astype(bool), want)


def test_set_f32_result():
    a = special_f32(32)
    b = np.roll(a, 1)
    got = run_op("set.lt.f32.f32 %d, %a, %b;", {"a": a, "b": b}, a="f32", b="f32", d="f32")
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, np.where(a < b, 1.0, 0.0).astype(np.float32))


# ------------------------------------------------------------------ cvt
@pytest.mark.parametrize("irnd,fn", [("rni", np.rint), ("rzi", np.trunc), ("rmi", np.floor), ("rpi", np.ceil)])
def test_cvt_float_to_int_saturates(irnd, fn):
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 3.7, -3.7,
                  2147483647.0, -2147483648.0, 0.49999997], np.float32)
    got = run_op(f"cvt.{irnd}.s32.f32 %d, %a;", {"a": a}, a="f32", d="s32")
    with np.errstate(invalid="ignore"):
        r = fn(a.astype(np.float64))
        want = np.where(np.isnan(r), 0, np.clip(r, -2**31, 2**31 - 1)).astype(np.int64)
    np.testing.assert_array_equal(got, want.astype(np.int32))
    got = run_op(f"cvt.{irnd}.u32.f32 %d, %a;", {"a": a}, a="f32", d="u32")
    with np.errstate(invalid="ignore"):
        want = np.where(np.isnan(r), 0, np.clip(r, 0, 2**32 - 1)).astype(np.int64)
    np.testing.assert_array_equal(got, want.astype(np.uint32))


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_cvt_int_to_float_rounding(mode):
    a = np.array([16777217, 16777219, -16777217, 2**31 - 1, -2**31, 0, 1, 123456789, -987654321] * 4,
                 np.int64)[:32]
    got = run_op(f"cvt.{mode}.f32.s32 %d, %a;", {"a": a}, a="s32", d="f32")
    want = np.array([rnd(Fraction(int(x)), "f32", mode) for x in a], np.float32)
    same(got, want, np.float32)
    a64 = np.array([2**60 + 1, -(2**53 + 1), 2**63 - 1, 3, -7] * 6, np.int64)
    got = run_op(f"cvt.{mode}.f64.s64 %d, %a;", {"a": a64}, a="s64", d="f64")
    want = np.array([rnd(Fraction(int(x)), "f64", mode) for x in a64], np.float64)
    same(got, want, np.float64)


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_cvt_f64_to_f32(mode):
    d = special_f64()
    got = run_op(f"cvt.{mode}.f32.f64 %d, %a;", {"a": d}, a="f64", d="f32")
    want = [rnd(exact(x), "f32", mode) if math.isfinite(x) and x != 0 else np.float32(x) for x in d]
    want = [math.copysign(0.0, x) if r == 0 else r for r, x in zip(want, d)]
    same(got, np.array(want, np.float32), np.float32)


def test_cvt_f32_f64_exact_and_integral_rounding():
    a = special_f32()
    same(run_op("cvt.f64.f32 %d, %a;", {"a": a}, a="f32", d="f64"), a.astype(np.float64), np.float64)
    same(run_op("cvt.rni.f32.f32 %d, %a;", {"a": a}, a="f32", d="f32"), np.rint(a), np.float32)
    same(run_op("cvt.rzi.f32.f32 %d, %a;", {"a": a}, a="f32", d="f32"), np.trunc(a), np.float32)


def f16bits(x):
    return np.asarray(x, np.float16).view(np.uint16)


def test_f16_conversions_and_arithmetic():
    a = np.array([0.1, 1.0, 65504.0, 70000.0, 1e-7, -2.5, 3.14159, 6e-8, 0.333], np.float32)
    got = run_op("cvt.rn.f16.f32 %d, %a;", {"a": a}, a="f32", d="f16")
    np.testing.assert_array_equal(got, f16bits(a.astype(np.float16)))
    h = f16bits(a.astype(np.float16))
    got = run_op("cvt.f32.f16 %d, %a;", {"a": h}, a="f16", d="f32")
    np.testing.assert_array_equal(got, h.view(np.float16).astype(np.float32))
    hb = np.roll(h, 2)
    got = run_op("add.f16 %d, %a, %b;", {"a": h, "b": hb}, a="f16", b="f16", d="f16")
    with np.errstate(all="ignore"):
        want = (h.view(np.float16).astype(np.float64) + hb.view(np.float16).astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(got, f16bits(want))
    got = run_op("mul.f16 %d, %a, %b;", {"a": h, "b": hb}, a="f16", b="f16", d="f16")
    with np.errstate(all="ignore"):
        want = (h.view(np.float16).astype(np.float64) * hb.view(np.float16).astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(got, f16bits(want))


def test_f16x2_packed():
    lo = f16bits(np.array([1.0, 2.0, -3.0, 0.5], np.float16))
    hi = f16bits(np.array([4.0, -1.0, 8.0, 0.25], np.float16))
    a = lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)
    got = run_op("mul.f16x2 %d, %a, %a;", {"a": a}, a="f16x2", d="f16x2")
    want_lo = f16bits(lo.view(np.float16) * lo.view(np.float16))
    want_hi = f16bits(hi.view(np.float16) * hi.view(np.float16))
    np.testing.assert_array_equal(got, want_lo.astype(np.uint32) | (want_hi.astype(np.uint32) << 16))
    x = np.array([1.5, -2.0, 1e5, 0.1], np.float32)
    y = np.array([0.25, 3.0, -1e5, 7.0], np.float32)
    got = run_op("cvt.rn.f16x2.f32 %d, %a, %b;", {"a": x, "b": y}, a="f32", b="f32", d="b32")
    want = f16bits(y.astype(np.float16)).astype(np.uint32) | (f16bits(x.astype(np.float16)).astype(np.uint32) << 16)
    np.testing.assert_array_equal(got, want)


def bf16_rn(x):
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF
    return r.astype(np.uint16)


def test_bf16_conversions():
    a = np.array([1.0, 1.00390625, 1.01171875, -3.3, 1e30, 1e-30, 0.1], np.float32)
    got = run_op("cvt.rn.bf16.f32 %d, %a;", {"a": a}, a="f32", d="bf16")
    np.testing.assert_array_equal(got, bf16_rn(a))
    got = run_op("cvt.f32.bf16 %d, %a;", {"a": bf16_rn(a)}, a="bf16", d="f32")
    np.testing.assert_array_equal(got, (bf16_rn(a).astype(np.uint32) << 16).view(np.float32))


def test_tf32_rna():
    a = np.array([1.0, 1.00048828125, 1.000244140625, -1.000732421875, 3.3], np.float32)
    got = run_op("cvt.rna.tf32.f32 %d, %a;", {"a": a}, a="f32", d="b32")
    b = a.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(got, (((b + 0x1000) & ~np.uint64(0x1FFF)) & 0xFFFFFFFF).astype(np.uint32))
