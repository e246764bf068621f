"""Integer arithmetic and bit manipulation (PTX ISA 9.7.1, 9.7.7, 9.7.8).

Exact PTX semantics on all 32 lanes at once. Cases where LLVM would give
poison or undefined behaviour are made explicit: shift amounts are clamped
(PTX: amounts above the width shift everything out), division by zero gives
all ones (quotient) or the dividend (remainder) like NVIDIA hardware, and
``INT_MIN / -1`` wraps.
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


# ------------------------------------------------------------- logic
def _logic(op):
    def h(cg, ins):
        t = itype(ins)
        a, b = srcs(cg, ins, t)
        cg.write(_dst(ins), vop(cg, op, t, a, b), t)
    return h


def op_not(cg, ins):
    t = itype(ins)
    a = cg.read(ins.srcs[0], t)
    cg.write(_dst(ins), vop(cg, "xor", t, a, _c(t, -1 if t != "pred" else "true")), t)


def op_cnot(cg, ins):
    t = itype(ins)
    a = cg.read(ins.srcs[0], t)
    z = cmp(cg, "eq", t, a, "zeroinitializer")
    cg.write(_dst(ins), cg.f.cast("zext", "<32 x i1>", z, T(t)), t)


def op_lop3(cg, ins):
    t = itype(ins)
    a, b, c = srcs(cg, ins, t, 3)
    lut = ins.srcs[3].value & 0xFF
    ones = _c(t, -1)
    na, nb, nc = (vop(cg, "xor", t, x, ones) for x in (a, b, c))
    acc = "zeroinitializer"
    for k in range(8):
        if lut >> k & 1:
            x = vop(cg, "and", t, a if k & 4 else na, b if k & 2 else nb)
            acc = vop(cg, "or", t, acc, vop(cg, "and", t, x, c if k & 1 else nc))
    cg.write(_dst(ins), acc, t)


# ------------------------------------------------------------- shifts
def clamp_shift(cg, t, amount_u32, n):
    """Shift amount as type t, plus a mask of lanes shifting >= n."""
    big = cg.f.val(f"icmp ugt <32 x i32> {amount_u32}, {splat('i32', n - 1)}")
    am = cg.f.val(f"select <32 x i1> {big}, <32 x i32> zeroinitializer, <32 x i32> {amount_u32}")
    if n != 32:
        am = cg.f.cast("zext" if n > 32 else "trunc", "<32 x i32>", am, vt(f"i{n}"))
    return am, big


def op_shl(cg, ins):
    t = itype(ins)
    n = _w(t)
    a = cg.read(ins.srcs[0], t)
    am, big = clamp_shift(cg, t, cg.read(ins.srcs[1], "u32"), n)
    r = cg.f.val(f"shl {T(t)} {a}, {am}")
    cg.write(_dst(ins), sel(cg, big, t, "zeroinitializer", r), t)


def op_shr(cg, ins):
    t = itype(ins)
    n = _w(t)
    a = cg.read(ins.srcs[0], t)
    am, big = clamp_shift(cg, t, cg.read(ins.srcs[1], "u32"), n)
    if is_signed(t):
        full = cg.f.val(f"ashr {T(t)} {a}, {_c(t, n - 1)}")
        r = cg.f.val(f"ashr {T(t)} {a}, {am}")
        r = sel(cg, big, t, full, r)
    else:
        r = sel(cg, big, t, "zeroinitializer", cg.f.val(f"lshr {T(t)} {a}, {am}"))
    cg.write(_dst(ins), r, t)


def op_shf(cg, ins):
    a, b = srcs(cg, ins, "b32", 2)
    c = cg.read(ins.srcs[2], "u32")
    f = cg.f
    left = "l" in ins.mods
    if "clamp" in ins.mods:
        big = f.val(f"icmp uge <32 x i32> {c}, {splat('i32', 32)}")
    else:
        big = None
    name = "llvm.fshl.v32i32" if left else "llvm.fshr.v32i32"
    r = intr(cg, name, "<32 x i32>", [("<32 x i32>", b), ("<32 x i32>", a), ("<32 x i32>", c)])
    if big is not None:
        r = sel(cg, big, "b32", a if left else b, r)
    cg.write(_dst(ins), r, "b32")


# ----------------------------------------------------------- bit ops
def op_popc(cg, ins):
    t = itype(ins)
    a = cg.read(ins.srcs[0], t)
    r = vintr(cg, "ctpop", t, a)
    cg.write(_dst(ins), cg.f.cast("trunc", T(t), r, "<32 x i32>") if _w(t) > 32 else r, "u32")


def op_clz(cg, ins):
    t = itype(ins)
    a = cg.read(ins.srcs[0], t)
    r = intr(cg, f"llvm.ctlz.v32i{_w(t)}", T(t), [(T(t), a), ("i1", "false")])
    cg.write(_dst(ins), cg.f.cast("trunc", T(t), r, "<32 x i32>") if _w(t) > 32 else r, "u32")


def op_brev(cg, ins):
    t = itype(ins)
    a = cg.read(ins.srcs[0], t)
    cg.write(_dst(ins), vintr(cg, "bitreverse", t, a), t)


def op_bfind(cg, ins):
    t = itype(ins)
    n = _w(t)
    a = cg.read(ins.srcs[0], t)
    f = cg.f
    x = a
    if is_signed(t):       # position of the most significant non-sign bit
        neg = cmp(cg, "slt", t, a, "zeroinitializer")
        x = sel(cg, neg, t, vop(cg, "xor", t, a, _c(t, -1)), a)
    lz = intr(cg, f"llvm.ctlz.v32i{n}", T(t), [(T(t), x), ("i1", "false")])
    if n > 32:
        lz = f.cast("trunc", T(t), lz, "<32 x i32>")
    pos = f.val(f"sub <32 x i32> {splat('i32', n - 1)}, {lz}")
    if "shiftamt" in ins.mods:
        pos = f.val(f"sub <32 x i32> {splat('i32', n - 1)}, {pos}")
    none = f.val(f"icmp eq <32 x i32> {lz}, {splat('i32', n)}")
    r = f.val(f"select <32 x i1> {none}, <32 x i32> {splat('i32', -1)}, <32 x i32> {pos}")
    cg.write(_dst(ins), r, "u32")


def low_mask(cg, t, length_t):
    """(1 << len) - 1 with len >= width giving all ones (vectors of type t)."""
    n = _w(t)
    big = cmp(cg, "uge", t, length_t, _c(t, n))
    safe = sel(cg, big, t, "zeroinitializer", length_t)
    m = vop(cg, "sub", t, vop(cg, "shl", t, _c(t, 1), safe), _c(t, 1))
    return sel(cg, big, t, _c(t, -1), m)


def field_len(cg, t, pos, length):
    """min(len, width - pos), 0 when pos >= width (vectors of type t)."""
    n = _w(t)
    out = cmp(cg, "uge", t, pos, _c(t, n))
    room = vop(cg, "sub", t, _c(t, n), sel(cg, out, t, "zeroinitializer", pos))
    e = vintr(cg, "umin", t, length, room)
    return sel(cg, out, t, "zeroinitializer", e), out


def op_bfe(cg, ins):
    t = itype(ins)
    n = _w(t)
    f = cg.f
    a = cg.read(ins.srcs[0], t)
    pos = _byte_arg(cg, ins.srcs[1], t)
    length = _byte_arg(cg, ins.srcs[2], t)
    e, out = field_len(cg, t, pos, length)
    x = sel(cg, out, t, "zeroinitializer", f.val(f"lshr {T(t)} {a}, {sel(cg, out, t, 'zeroinitializer', pos)}"))
    m = low_mask(cg, t, e)
    r = vop(cg, "and", t, x, m)
    if is_signed(t):
        top = vop(cg, "add", t, pos, length)
        top = vop(cg, "sub", t, top, _c(t, 1))
        top = vintr(cg, "umin", t, top, _c(t, n - 1))
        sb = vop(cg, "and", t, f.val(f"lshr {T(t)} {a}, {top}"), _c(t, 1))
        zero_len = cmp(cg, "eq", t, length, "zeroinitializer")
        sb = sel(cg, zero_len, t, "zeroinitializer", sb)
        fill = vop(cg, "sub", t, "zeroinitializer", sb)           # 0 or all ones
        r = vop(cg, "or", t, r, vop(cg, "and", t, fill, vop(cg, "xor", t, m, _c(t, -1))))
    cg.write(_dst(ins), r, t)


def op_bfi(cg, ins):
    t = itype(ins)
    f = cg.f
    a, b = srcs(cg, ins, t, 2)
    pos = _byte_arg(cg, ins.srcs[2], t)
    length = _byte_arg(cg, ins.srcs[3], t)
    e, out = field_len(cg, t, pos, length)
    safe_pos = sel(cg, out, t, "zeroinitializer", pos)
    m = f.val(f"shl {T(t)} {low_mask(cg, t, e)}, {safe_pos}")
    ins_bits = vop(cg, "and", t, f.val(f"shl {T(t)} {a}, {safe_pos}"), m)
    keep = vop(cg, "and", t, b, vop(cg, "xor", t, m, _c(t, -1)))
    cg.write(_dst(ins), vop(cg, "or", t, keep, ins_bits), t)


def _byte_arg(cg, op, t):
    v = cg.read(op, "u32")
    v = cg.f.val(f"and <32 x i32> {v}, {splat('i32', 255)}")
    return cg.f.cast("zext", "<32 x i32>", v, T(t)) if _w(t) == 64 else v


PRMT_MODES = {
    "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
}


def op_prmt(cg, ins):
    f = cg.f
    a, b, c = srcs(cg, ins, "b32", 3)
    a64 = f.cast("zext", "<32 x i32>", a, "<32 x i64>")
    b64 = f.cast("zext", "<32 x i32>", b, "<32 x i64>")
    hi = f.val(f"shl <32 x i64> {b64}, {splat('i64', 32)}")
    wide = f.val(f"or <32 x i64> {a64}, {hi}")
    mode = next((m for m in ins.mods if m in PRMT_MODES), None)
    acc = "zeroinitializer"
    for k in range(4):
        if mode is None:
            ctl = f.val(f"lshr <32 x i32> {c}, {splat('i32', 4 * k)}")
            ctl = f.val(f"and <32 x i32> {ctl}, {splat('i32', 15)}")
            which = f.val(f"and <32 x i32> {ctl}, {splat('i32', 7)}")
        else:
            c2 = f.val(f"and <32 x i32> {c}, {splat('i32', 3)}")
            which = _lookup4(cg, [PRMT_MODES[mode][j][k] for j in range(4)], c2)
        sh = f.val(f"shl <32 x i64> {f.cast('zext', '<32 x i32>', which, '<32 x i64>')}, {splat('i64', 3)}")
        byte = f.cast("trunc", "<32 x i64>", f.val(f"lshr <32 x i64> {wide}, {sh}"), "<32 x i8>")
        if mode is None:               # msb of the selector: replicate the byte's sign
            sgn = f.val(f"icmp uge <32 x i32> {ctl}, {splat('i32', 8)}")
            fill = f.val(f"ashr <32 x i8> {byte}, {splat('i8', 7)}")
            byte = f.val(f"select <32 x i1> {sgn}, <32 x i8> {fill}, <32 x i8> {byte}")
        byte32 = f.cast("zext", "<32 x i8>", byte, "<32 x i32>")
        placed = f.val(f"shl <32 x i32> {byte32}, {splat('i32', 8 * k)}")
        acc = f.val(f"or <32 x i32> {acc}, {placed}")
    cg.write(_dst(ins), acc, "b32")


def _lookup4(cg, vals: list[int], idx: str) -> str:
    """Per-lane lookup in a 4-entry constant table."""
    f = cg.f
    out = "zeroinitializer"
    for j, v in enumerate(vals):
        hit = f.val(f"icmp eq <32 x i32> {idx}, {splat('i32', j)}")
        out = f.val(f"select <32 x i1> {hit}, <32 x i32> {splat('i32', v)}, <32 x i32> {out}")
    return out


def op_bmsk(cg, ins):
    a, b = srcs(cg, ins, "u32", 2)
    f = cg.f
    if "clamp" in ins.mods:
        a = f.val(f"call <32 x i32> @llvm.umin.v32i32(<32 x i32> {a}, <32 x i32> {splat('i32', 32)})")
        b = f.val(f"call <32 x i32> @llvm.umin.v32i32(<32 x i32> {b}, <32 x i32> {splat('i32', 32)})")
        cg.decls.add("declare <32 x i32> @llvm.umin.v32i32(<32 x i32>, <32 x i32>)")
    else:
        a = f.val(f"and <32 x i32> {a}, {splat('i32', 31)}")
        b = f.val(f"and <32 x i32> {b}, {splat('i32', 31)}")
    end = f.val(f"add <32 x i32> {a}, {b}")
    end = f.val(f"call <32 x i32> @llvm.umin.v32i32(<32 x i32> {end}, <32 x i32> {splat('i32', 32)})")
    cg.decls.add("declare <32 x i32> @llvm.umin.v32i32(<32 x i32>, <32 x i32>)")
    hi = low_mask(cg, "b32", end)
    lo = low_mask(cg, "b32", a)
    cg.write(_dst(ins), f.val(f"xor <32 x i32> {hi}, {lo}"), "b32")


def op_szext(cg, ins):
    t = itype(ins)
    a = cg.read(ins.srcs[0], "b32")
    b = _byte_arg(cg, ins.srcs[1], "b32")
    f = cg.f
    if "clamp" in ins.mods:
        b = vintr(cg, "umin", "b32", b, splat("i32", 32))
    else:
        b = f.val(f"and <32 x i32> {b}, {splat('i32', 31)}")
    m = low_mask(cg, "b32", b)
    lowbits = f.val(f"and <32 x i32> {a}, {m}")
    if is_signed(t):
        z = f.val(f"icmp eq <32 x i32> {b}, zeroinitializer")
        sh = f.val(f"sub <32 x i32> {splat('i32', 32)}, {b}")
        sh = f.val(f"select <32 x i1> {z}, <32 x i32> zeroinitializer, <32 x i32> {sh}")
        r = f.val(f"ashr <32 x i32> {f.val(f'shl <32 x i32> {a}, {sh}')}, {sh}")
        lowbits = f.val(f"select <32 x i1> {z}, <32 x i32> zeroinitializer, <32 x i32> {r}")
    cg.write(_dst(ins), lowbits, "b32")


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


def _vshift(kind: str):
    def h(cg, ins):
        """vshl/vshr.dtype.atype.u32{.sat}.{clamp,wrap}{.op2} d, a, b{, c} (PTX ISA
        scalar video instructions): tb = min(b, 32) (.clamp) or b & 31 (.wrap);
        tmp = a << tb / a >> tb (arithmetic for .s32 a), computed in 64 bits,
        optionally saturated to dtype, then the secondary op (.add/.min/.max) with c.
        Byte/half selectors and the merge form are not supported."""
        ts = [m for m in ins.mods if m in ("u32", "s32")]
        if len(ts) != 3 or any(m in ins.mods for m in ("b0", "b1", "b2", "b3", "h0", "h1")) or \
                len(ins.srcs) > 2 and not any(m in ins.mods for m in ("add", "min", "max")):
            return cg.unsupported(ins)
        dt, at = ts[0], ts[1]
        f = cg.f
        a, b = cg.read(ins.srcs[0], "b32"), cg.read(ins.srcs[1], "b32")
        ta = f.cast("sext" if at == "s32" else "zext", "<32 x i32>", a, "<32 x i64>")
        if "wrap" in ins.mods:
            tb = f.val(f"and <32 x i32> {b}, {splat('i32', 31)}")
        else:
            tb = intr(cg, "llvm.umin.v32i32", "<32 x i32>", [("<32 x i32>", b), ("<32 x i32>", splat("i32", 32))])
        tb = f.cast("zext", "<32 x i32>", tb, "<32 x i64>")
        op = "shl" if kind == "shl" else ("ashr" if at == "s32" else "lshr")
        tmp = f.val(f"{op} <32 x i64> {ta}, {tb}")
        if "sat" in ins.mods:
            lo, hi = (-(1 << 31), (1 << 31) - 1) if dt == "s32" else (0, (1 << 32) - 1)
            V = "<32 x i64>"
            tmp = intr(cg, "llvm.smax.v32i64", V, [(V, tmp), (V, splat("i64", lo))])
            tmp = intr(cg, "llvm.smin.v32i64", V, [(V, tmp), (V, splat("i64", hi))])
        r = f.cast("trunc", "<32 x i64>", tmp, "<32 x i32>")
        if len(ins.srcs) > 2:
            c = cg.read(ins.srcs[2], "b32")
            V = "<32 x i32>"
            if "add" in ins.mods:
                r = f.val(f"add {V} {r}, {c}")
            else:
                s_ = "s" if dt == "s32" else "u"
                m = "min" if "min" in ins.mods else "max"
                r = intr(cg, f"llvm.{s_}{m}.v32i32", V, [(V, r), (V, c)])
        cg.write(_dst(ins), r, "b32")
    return h


def op_createpolicy(cg, ins):
    """createpolicy: an opaque 64-bit cache policy. Its only consumers are cache
    hints, which the executor ignores, so any constant will do."""
    cg.write(_dst(ins), splat("i64", 0), "b64")


OPS = {
    "add": op_add, "sub": op_sub, "addc": op_addc, "subc": op_subc,
    "mul": op_mul, "mad": op_mad, "madc": op_madc, "mul24": op_mul24, "mad24": op_mad24,
    "sad": op_sad, "div": op_div, "rem": op_rem, "abs": op_abs, "neg": op_neg,
    "min": _minmax("min"), "max": _minmax("max"),
    "and": _logic("and"), "or": _logic("or"), "xor": _logic("xor"), "not": op_not,
    "cnot": op_cnot, "lop3": op_lop3, "shl": op_shl, "shr": op_shr, "shf": op_shf,
    "popc": op_popc, "clz": op_clz, "brev": op_brev, "bfind": op_bfind, "bfe": op_bfe,
    "bfi": op_bfi, "prmt": op_prmt, "bmsk": op_bmsk, "szext": op_szext, "dp4a": op_dp4a,
    "dp2a": op_dp2a, "vshl": _vshift("shl"), "vshr": _vshift("shr"),
    "createpolicy": op_createpolicy,
}
