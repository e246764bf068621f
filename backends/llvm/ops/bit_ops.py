"""Logic, shifts and bit manipulation: and, or, xor, not, cnot, lop3, shl,
shr, shf (PTX ISA 9.7.8 "Logic and Shift Instructions", 9.7.7 in editions
before the mixed-precision section), the bit instructions of 9.7.1 (popc,
clz, brev, bfind, bfe, bfi, bmsk, szext), prmt, and the scalar video shifts
vshl/vshr.

Exact PTX semantics on all 32 lanes at once, as in int_arith.py (whose
small helpers these lowerings share). Shift amounts are clamped (PTX:
amounts above the width shift everything out), where LLVM would give
poison.
"""
from __future__ import annotations

from ptxc.backends.llvm.ops.common import (T, cmp, intr, is_signed, itype, sel, splat, srcs, vintr,
                                           vop, vt)
from ptxc.backends.llvm.ops.int_arith import _c, _dst, _w

__all__ = ["OPS"]


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


OPS = {
    "and": _logic("and"), "or": _logic("or"), "xor": _logic("xor"), "not": op_not,
    "cnot": op_cnot, "lop3": op_lop3, "shl": op_shl, "shr": op_shr, "shf": op_shf,
    "popc": op_popc, "clz": op_clz, "brev": op_brev, "bfind": op_bfind, "bfe": op_bfe,
    "bfi": op_bfi, "prmt": op_prmt, "bmsk": op_bmsk, "szext": op_szext,
    "vshl": _vshift("shl"), "vshr": _vshift("shr"),
}
