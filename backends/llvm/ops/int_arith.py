"""Integer arithmetic (PTX ISA 9.7.1 "Integer Arithmetic Instructions" and
9.7.2 "Extended-Precision Integer Arithmetic Instructions"): add, sub, mul,
mad, mul24, mad24, sad, div, rem, abs, neg, min, max, dp4a, dp2a and the
carry forms; logic, shifts and bit manipulation are in bit_ops.py.

Exact PTX semantics on all 32 lanes at once. Cases where LLVM would give
poison or undefined behaviour are made explicit: division by zero gives
all ones (quotient) or the dividend (remainder) like NVIDIA hardware, and
``INT_MIN / -1`` wraps. Floating-point forms of the shared opcodes go to
float_arith.py.
"""
from __future__ import annotations

from ptxc.backends.llvm.ops.common import (T, bits_of, lty, cmp, intr, is_float, is_signed, itype,
                                           sel, splat, srcs, vintr, vop, vt)

__all__ = ["OPS"]


def _float_or(handler_name):
    """Dispatch to ops_float for floating-point types."""
    def wrap(int_handler):
        def h(cg, ins):
            t = itype(ins)
            if is_float(t):
                from ptxc.backends.llvm.ops import float_arith as ops_float
                return getattr(ops_float, handler_name)(cg, ins)
            return int_handler(cg, ins)
        return h
    return wrap


def _dst(ins):
    return ins.results[0] if ins.results else None


def _w(t):
    return bits_of(t)


def _c(t, v):
    """A constant vector of type t."""
    return splat(lty(t), v)


def ext(cg, v, t, wide_bits, signed=None):
    """Widen a vector of type t to wide_bits (sign by t unless told)."""
    s = is_signed(t) if signed is None else signed
    return cg.f.cast("sext" if s else "zext", T(t), v, vt(f"i{wide_bits}"))


def carry_in(cg, ins):
    cf = ins.implicit[0] if ins.implicit else None
    return cg.read(cf, "pred") if cf is not None else "zeroinitializer"


def write_cc(cg, ins, carry):
    """Write the carry flag result (the last result of a .cc instruction)."""
    if "cc" in ins.mods and ins.results and ins.results[-1].reg == "%cc":
        cg.write(ins.results[-1], carry, "pred")


# ------------------------------------------------------------ add / sub
@_float_or("fadd")
def op_add(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t)
    if "sat" in ins.mods:
        r = vintr(cg, "sadd.sat", t, a, b)
    else:
        r = vop(cg, "add", t, a, b)
    if "cc" in ins.mods:
        write_cc(cg, ins, cmp(cg, "ult", t, r, a))
    cg.write(_dst(ins), r, t)


@_float_or("fsub")
def op_sub(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t)
    r = vintr(cg, "ssub.sat", t, a, b) if "sat" in ins.mods else vop(cg, "sub", t, a, b)
    if "cc" in ins.mods:
        write_cc(cg, ins, cmp(cg, "ult", t, a, b))
    cg.write(_dst(ins), r, t)


def op_addc(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t)
    ci = cg.f.cast("zext", "<32 x i1>", carry_in(cg, ins), T(t))
    s1 = vop(cg, "add", t, a, b)
    r = vop(cg, "add", t, s1, ci)
    c1 = cmp(cg, "ult", t, s1, a)
    c2 = cmp(cg, "ult", t, r, s1)
    write_cc(cg, ins, cg.f.val(f"or <32 x i1> {c1}, {c2}"))
    cg.write(_dst(ins), r, t)


def op_subc(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t)
    ci = cg.f.cast("zext", "<32 x i1>", carry_in(cg, ins), T(t))
    d1 = vop(cg, "sub", t, a, b)
    r = vop(cg, "sub", t, d1, ci)
    b1 = cmp(cg, "ult", t, a, b)
    b2 = cmp(cg, "ult", t, d1, ci)
    write_cc(cg, ins, cg.f.val(f"or <32 x i1> {b1}, {b2}"))
    cg.write(_dst(ins), r, t)


# ------------------------------------------------------------------ mul
def mul_parts(cg, ins, t, a, b):
    """(result, result type) of mul.lo / .hi / .wide on a, b."""
    n = _w(t)
    if "wide" in ins.mods:
        wt = ("s" if is_signed(t) else "u") + str(2 * n)
        return vop(cg, "mul", wt, ext(cg, a, t, 2 * n), ext(cg, b, t, 2 * n)), wt
    if "hi" in ins.mods:
        wt = "b%d" % (2 * n)
        p = vop(cg, "mul", wt, ext(cg, a, t, 2 * n), ext(cg, b, t, 2 * n))
        p = cg.f.val(f"lshr {T(wt)} {p}, {_c(wt, n)}")
        return cg.f.cast("trunc", T(wt), p, T(t)), t
    return vop(cg, "mul", t, a, b), t


@_float_or("fmul")
def op_mul(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t)
    r, rt = mul_parts(cg, ins, t, a, b)
    cg.write(_dst(ins), r, rt)


@_float_or("ffma")
def op_mad(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t, 2)
    p, rt = mul_parts(cg, ins, t, a, b)
    c = cg.read(ins.srcs[2], rt)
    if "sat" in ins.mods:          # mad.hi.sat.s32
        r = vintr(cg, "sadd.sat", rt, p, c)
    else:
        r = vop(cg, "add", rt, p, c)
    if "cc" in ins.mods:
        write_cc(cg, ins, cmp(cg, "ult", rt, r, p))
    cg.write(_dst(ins), r, rt)


def op_madc(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t, 2)
    p, rt = mul_parts(cg, ins, t, a, b)
    c = cg.read(ins.srcs[2], rt)
    ci = cg.f.cast("zext", "<32 x i1>", carry_in(cg, ins), T(rt))
    s1 = vop(cg, "add", rt, p, c)
    r = vop(cg, "add", rt, s1, ci)
    c1 = cmp(cg, "ult", rt, s1, p)
    c2 = cmp(cg, "ult", rt, r, s1)
    write_cc(cg, ins, cg.f.val(f"or <32 x i1> {c1}, {c2}"))
    cg.write(_dst(ins), r, rt)


def mul24(cg, ins, a, b, t):
    """The 48-bit product of the low 24 bits (sign-extended for .s32)."""
    f = cg.f
    if is_signed(t):
        e8 = splat("i32", 8)
        a = f.val(f"ashr <32 x i32> {f.val(f'shl <32 x i32> {a}, {e8}')}, {e8}")
        b = f.val(f"ashr <32 x i32> {f.val(f'shl <32 x i32> {b}, {e8}')}, {e8}")
    else:
        a = f.val(f"and <32 x i32> {a}, {splat('i32', 0xFFFFFF)}")
        b = f.val(f"and <32 x i32> {b}, {splat('i32', 0xFFFFFF)}")
    p = vop(cg, "mul", "b64", ext(cg, a, t, 64), ext(cg, b, t, 64))
    if "hi" in ins.mods:
        p = f.val(f"lshr <32 x i64> {p}, {splat('i64', 16)}")
    return f.cast("trunc", "<32 x i64>", p, "<32 x i32>")


def op_mul24(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t)
    cg.write(_dst(ins), mul24(cg, ins, a, b, t), t)


def op_mad24(cg, ins):
    t = itype(ins)
    a, b, c = srcs(cg, ins, t)
    p = mul24(cg, ins, a, b, t)
    r = vintr(cg, "sadd.sat", t, p, c) if "sat" in ins.mods else vop(cg, "add", t, p, c)
    cg.write(_dst(ins), r, t)


def op_sad(cg, ins):
    t = itype(ins)
    a, b, c = srcs(cg, ins, t)
    lo = vintr(cg, "smin" if is_signed(t) else "umin", t, a, b)
    hi = vintr(cg, "smax" if is_signed(t) else "umax", t, a, b)
    cg.write(_dst(ins), vop(cg, "add", t, c, vop(cg, "sub", t, hi, lo)), t)


# ------------------------------------------------------------ div / rem
def safe_divisor(cg, t, a, b):
    """(divisor with 0 -> 1 and MIN/-1 -> 1, zero mask, overflow mask)."""
    n = _w(t)
    zero = cmp(cg, "eq", t, b, "zeroinitializer")
    bad = zero
    ovf = None
    if is_signed(t):
        m1 = cmp(cg, "eq", t, b, _c(t, -1))
        mn = cmp(cg, "eq", t, a, _c(t, -(1 << (n - 1))))
        ovf = cg.f.val(f"and <32 x i1> {m1}, {mn}")
        bad = cg.f.val(f"or <32 x i1> {zero}, {ovf}")
    return sel(cg, bad, t, _c(t, 1), b), zero, ovf


@_float_or("fdiv")
def op_div(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t)
    d, zero, ovf = safe_divisor(cg, t, a, b)
    q = vop(cg, "sdiv" if is_signed(t) else "udiv", t, a, d)
    if ovf is not None:
        q = sel(cg, ovf, t, a, q)            # MIN / -1 = MIN (wraps)
    q = sel(cg, zero, t, _c(t, -1), q)       # x / 0 = all ones
    cg.write(_dst(ins), q, t)


def op_rem(cg, ins):
    t = itype(ins)
    a, b = srcs(cg, ins, t)
    d, zero, ovf = safe_divisor(cg, t, a, b)
    r = vop(cg, "srem" if is_signed(t) else "urem", t, a, d)
    if ovf is not None:
        r = sel(cg, ovf, t, "zeroinitializer", r)
    r = sel(cg, zero, t, a, r)               # x % 0 = x
    cg.write(_dst(ins), r, t)


# ------------------------------------------------- abs neg min max ...
@_float_or("fabs")
def op_abs(cg, ins):
    t = itype(ins)
    a = cg.read(ins.srcs[0], t)
    cg.write(_dst(ins), intr(cg, f"llvm.abs.v32i{_w(t)}", T(t), [(T(t), a), ("i1", "false")]), t)


@_float_or("fneg")
def op_neg(cg, ins):
    t = itype(ins)
    a = cg.read(ins.srcs[0], t)
    cg.write(_dst(ins), vop(cg, "sub", t, "zeroinitializer", a), t)


def _minmax(kind):
    def h(cg, ins):
        t = itype(ins)
        if is_float(t):
            from ptxc.backends.llvm.ops import float_arith as ops_float
            return ops_float.fminmax(cg, ins, kind)
        a, b = srcs(cg, ins, t, 2)
        if t in ("s16x2", "u16x2"):
            from ptxc.backends.llvm.ops import float_arith as ops_float
            return ops_float.packed_int_minmax(cg, ins, kind, a, b)
        r = vintr(cg, ("s" if is_signed(t) else "u") + kind, t, a, b)
        if "relu" in ins.mods:
            r = vintr(cg, "smax", t, r, "zeroinitializer")
        cg.write(_dst(ins), r, t)
    return h


# --------------------------------------------------------- dot products
def op_dp4a(cg, ins):
    ts = [m for m in ins.mods if m in ("u32", "s32")]
    ta, tb = (ts + ts)[:2] if len(ts) < 2 else ts[:2]
    a, b, c = (cg.read(o, "b32") for o in ins.srcs[:3])
    f = cg.f
    acc = c
    for k in range(4):
        xs = []
        for v, tt in ((a, ta), (b, tb)):
            sh = f.val(f"lshr <32 x i32> {v}, {splat('i32', 8 * k)}")
            byte = f.cast("trunc", "<32 x i32>", sh, "<32 x i8>")
            xs.append(f.cast("sext" if tt == "s32" else "zext", "<32 x i8>", byte, "<32 x i32>"))
        acc = f.val(f"add <32 x i32> {acc}, {f.val(f'mul <32 x i32> {xs[0]}, {xs[1]}')}")
    cg.write(_dst(ins), acc, "b32")


def op_dp2a(cg, ins):
    """dp2a.{lo,hi}.atype.btype d, a, b, c: d = c + sum_i a.h[i] * b.byte[sel + i],
    the halves of a and the bytes of b sign- or zero-extended by their type,
    sel = 0 for .lo and 2 for .hi (PTX ISA dp2a)."""
    ts = [m for m in ins.mods if m in ("u32", "s32")]
    ta, tb = (ts + ts)[:2] if len(ts) < 2 else ts[:2]
    a, b, c = (cg.read(o, "b32") for o in ins.srcs[:3])
    f = cg.f
    sel0 = 2 if "hi" in ins.mods else 0
    acc = c
    for i in range(2):
        ha = f.cast("trunc", "<32 x i32>", f.val(f"lshr <32 x i32> {a}, {splat('i32', 16 * i)}"), "<32 x i16>")
        xa = f.cast("sext" if ta == "s32" else "zext", "<32 x i16>", ha, "<32 x i32>")
        bb = f.cast("trunc", "<32 x i32>", f.val(f"lshr <32 x i32> {b}, {splat('i32', 8 * (sel0 + i))}"), "<32 x i8>")
        xb = f.cast("sext" if tb == "s32" else "zext", "<32 x i8>", bb, "<32 x i32>")
        acc = f.val(f"add <32 x i32> {acc}, {f.val(f'mul <32 x i32> {xa}, {xb}')}")
    cg.write(_dst(ins), acc, "b32")


def op_createpolicy(cg, ins):
    """createpolicy: an opaque 64-bit cache policy. Its only consumers are cache
    hints, which the executor ignores, so any constant will do."""
    cg.write(_dst(ins), splat("i64", 0), "b64")


OPS = {
    "add": op_add, "sub": op_sub, "addc": op_addc, "subc": op_subc,
    "mul": op_mul, "mad": op_mad, "madc": op_madc, "mul24": op_mul24, "mad24": op_mad24,
    "sad": op_sad, "div": op_div, "rem": op_rem, "abs": op_abs, "neg": op_neg,
    "min": _minmax("min"), "max": _minmax("max"), "dp4a": op_dp4a, "dp2a": op_dp2a,
    "createpolicy": op_createpolicy,
}
