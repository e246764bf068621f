"""cvt (PTX ISA 9.7.9 conversion, cvt 9.7.9.21).

cvt follows the ISA's rules: integer widening by the source signedness,
narrowing by truncation (or clamping with ``.sat``); float -> integer rounds
with ``.rni/.rzi/.rmi/.rpi`` and always saturates, NaN giving 0
(``llvm.fptosi.sat``); integer -> float and float narrowing round with
``.rn/.rz/.rm/.rp``. Also the packing forms (``cvt.pack``, f16x2/bf16x2
pairs, the fp8 pairs e4m3x2/e5m2x2) and ``cvt.rna.tf32.f32``.
"""
from __future__ import annotations

from ptxc.backends.llvm.irtext import splat, vt
from ptxc.backends.llvm.ops.common import T, bits_of, intr, is_float, is_signed, types_of, vname
from ptxc.backends.llvm.ops.float_arith import (HALF, PACKED, directed_cast, float_to_half, ftz32,
                                                half_to_float, join2, saturate)
from ptxc.backends.llvm.ops.move import _dst
from ptxc.backends.llvm.values import lty


def K(v) -> str:
    return splat("i32", v)


IRND = {"rni": "roundeven", "rzi": "trunc", "rmi": "floor", "rpi": "ceil"}


def op_cvt(cg, ins):
    ts = types_of(ins)
    if len(ts) < 2:
        return cg.unsupported(ins)
    dt, at = ts[0], ts[1]
    if "pack" in ins.mods:
        return cvt_pack_int(cg, ins, dt)
    if dt in FP8X2:
        return cvt_fp8x2(cg, ins, dt, at)
    if dt in PACKED and len(ins.srcs) >= 2:
        return cvt_pack2(cg, ins, dt, at)
    if dt == "tf32":
        return cvt_tf32(cg, ins, at)
    if is_float(dt) and dt not in ("f32", "f64", "f16", "bf16"):
        return cg.unsupported(ins)
    if is_float(at) and at not in ("f32", "f64", "f16", "bf16"):
        return cg.unsupported(ins)
    if is_float(at):
        v = read_float(cg, ins, at)
        src_lt = "double" if at == "f64" else "float"
        if is_float(dt):
            return cg.write(_dst(ins), float_to_float(cg, ins, v, src_lt, dt), _wtype(dt))
        return cg.write(_dst(ins), float_to_int(cg, ins, v, src_lt, dt), dt)
    a = cg.read(ins.srcs[0], at)
    if is_float(dt):
        return cg.write(_dst(ins), int_to_float(cg, ins, a, at, dt), _wtype(dt))
    cg.write(_dst(ins), int_to_int(cg, ins, a, at, dt), dt)


def _wtype(t: str) -> str:
    return "b16" if t in ("f16", "bf16") else t


def read_float(cg, ins, t: str) -> str:
    """Source as float (f16/bf16/f32) or double (f64)."""
    if t in HALF:
        bits = cg.read(ins.srcs[0], "b16")
        return half_to_float(cg, bits, t)
    v = cg.read(ins.srcs[0], t)
    if t == "f32" and "ftz" in ins.mods:
        v = ftz32(cg, v)
    return v


def rounding(ins) -> str | None:
    for m in ins.mods:
        if m in ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi"):
            return m
    return None


def float_to_float(cg, ins, v: str, lt: str, dt: str) -> str:
    f = cg.f
    rnd = rounding(ins) or "rn"
    if rnd in IRND:
        V = vt(lt)
        v = intr(cg, f"llvm.{IRND[rnd]}.{vname(lt)}", V, [(V, v)])
        rnd = "rn"
    if dt == "f64":
        r = f.cast("fpext", "<32 x float>", v, "<32 x double>") if lt == "float" else v
        return saturate(cg, "double", r) if "sat" in ins.mods else r
    if lt == "double":
        if dt == "f32":
            r = f.cast("fptrunc", "<32 x double>", v, "<32 x float>") if rnd == "rn" else \
                directed_cast(cg, "fptrunc", "double", "float", v, rnd)
        else:
            r = round_to_odd_f32(cg, v)
    else:
        r = v
    if "sat" in ins.mods:
        r = saturate(cg, "float", r)
    if dt == "f32":
        if "ftz" in ins.mods:
            r = ftz32(cg, r)
        return r
    if "relu" in ins.mods:
        neg = f.val(f"fcmp olt <32 x float> {r}, zeroinitializer")
        r = f.val(f"select <32 x i1> {neg}, <32 x float> zeroinitializer, <32 x float> {r}")
    return float_to_half(cg, r, dt, rnd if rnd in ("rn", "rz", "rm", "rp") else "rn")


def round_to_odd_f32(cg, v: str) -> str:
    """f64 -> f32 rounded to odd, so a second rounding to f16 is exact
    (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums", 2008)."""
    f = cg.f
    r = directed_cast(cg, "fptrunc", "double", "float", v, "rz")
    back = f.cast("fpext", "<32 x float>", r, "<32 x double>")
    inexact = f.val(f"fcmp une <32 x double> {back}, {v}")
    bits = f.cast("bitcast", "<32 x float>", r, "<32 x i32>")
    sticky = f.cast("zext", "<32 x i1>", inexact, "<32 x i32>")
    nan = f.val(f"fcmp uno <32 x double> {v}, zeroinitializer")
    odd = f.val(f"or <32 x i32> {bits}, {sticky}")
    odd = f.val(f"select <32 x i1> {nan}, <32 x i32> {bits}, <32 x i32> {odd}")
    return f.cast("bitcast", "<32 x i32>", odd, "<32 x float>")


def float_to_int(cg, ins, v: str, lt: str, dt: str) -> str:
    rnd = rounding(ins) or "rzi"
    V = vt(lt)
    r = intr(cg, f"llvm.{IRND.get(rnd, 'trunc')}.{vname(lt)}", V, [(V, v)])
    it = T(dt)
    kind = "fptosi" if is_signed(dt) else "fptoui"
    return intr(cg, f"llvm.{kind}.sat.{vname(lty(dt))}.{vname(lt)}", it, [(V, r)])


def int_to_float(cg, ins, a: str, at: str, dt: str) -> str:
    f = cg.f
    rnd = rounding(ins) or "rn"
    op = "sitofp" if is_signed(at) else "uitofp"
    tl = "double" if dt == "f64" else "float"
    if rnd == "rn":
        r = f.cast(op, T(at), a, vt(tl))
    else:
        r = directed_cast(cg, op, lty(at), tl, a, rnd)
    if "sat" in ins.mods:
        r = saturate(cg, tl, r)
    if dt in HALF:
        return float_to_half(cg, r, dt, rnd)
    return r


def int_to_int(cg, ins, a: str, at: str, dt: str) -> str:
    f = cg.f
    ab, db = bits_of(at), bits_of(dt)
    if "sat" in ins.mods:
        a, at = clamp_int(cg, a, at, dt), at
    if db > ab:
        return f.cast("sext" if is_signed(at) else "zext", T(at), a, T(dt))
    if db < ab:
        return f.cast("trunc", T(at), a, T(dt))
    return a


def clamp_int(cg, a: str, at: str, dt: str) -> str:
    """Clamp a (type at) to the range of dt, still in type at."""
    ab, db = bits_of(at), bits_of(dt)
    lo = -(1 << (db - 1)) if is_signed(dt) else 0
    hi = (1 << (db - 1)) - 1 if is_signed(dt) else (1 << db) - 1
    amin = -(1 << (ab - 1)) if is_signed(at) else 0
    amax = (1 << (ab - 1)) - 1 if is_signed(at) else (1 << ab) - 1
    s = "s" if is_signed(at) else "u"
    V = T(at)

    def lit(x):
        return x - (1 << ab) if x >= 1 << (ab - 1) else x
    if lo > amin:
        a = intr(cg, f"llvm.{s}max.{vname(lty(at))}", V, [(V, a), (V, splat(lty(at), lit(lo)))])
    if hi < amax:
        a = intr(cg, f"llvm.{s}min.{vname(lty(at))}", V, [(V, a), (V, splat(lty(at), lit(hi)))])
    return a


def cvt_pack2(cg, ins, dt: str, at: str) -> None:
    """cvt.rn.f16x2.f32 d, a, b: a -> upper half, b -> lower half."""
    base = dt[:-2]
    rnd = rounding(ins) or "rn"
    halves = []
    for op in ins.srcs[:2]:
        v = cg.read(op, "f32")
        if "relu" in ins.mods:
            neg = cg.f.val(f"fcmp olt <32 x float> {v}, zeroinitializer")
            v = cg.f.val(f"select <32 x i1> {neg}, <32 x float> zeroinitializer, <32 x float> {v}")
        if "sat" in ins.mods:
            v = saturate(cg, "float", v)
        halves.append(float_to_half(cg, v, base, rnd))
    cg.write(_dst(ins), join2(cg, halves[1], halves[0]), "b32")


def cvt_pack_int(cg, ins, dt: str) -> None:
    """cvt.pack.sat.{u16,s16}.s32 d, a, b and cvt.pack.sat.{u2..s8}.s32.b32 d, a, b, c
    (PTX ISA 9.7.9.22): a and b clamped to dt; sat(a) in bits [2n-1:n], sat(b)
    in [n-1:0] (n = width of dt) and, with c, c's low bits above them."""
    f = cg.f
    dt = next((m for m in ins.mods if m in ("u2", "s2", "u4", "s4", "u8", "s8", "u16", "s16")), dt)
    n = int(dt[1:])
    if dt[0] not in "us" or n not in (2, 4, 8, 16):
        return cg.unsupported(ins)
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if dt[0] == "s" else (0, (1 << n) - 1)
    parts = []
    for op in ins.srcs[:2]:
        v = cg.read(op, "s32")
        v = intr(cg, "llvm.smax.v32i32", T("s32"), [(T("s32"), v), (T("s32"), K(lo))])
        v = intr(cg, "llvm.smin.v32i32", T("s32"), [(T("s32"), v), (T("s32"), K(hi))])
        parts.append(f.val(f"and <32 x i32> {v}, {K((1 << n) - 1)}"))
    ta = f.val(f"shl <32 x i32> {parts[0]}, {K(n)}")
    d = f.val(f"or <32 x i32> {ta}, {parts[1]}")
    if len(ins.srcs) > 2 and 2 * n < 32:
        c = f.val(f"shl <32 x i32> {cg.read(ins.srcs[2], 'b32')}, {K(2 * n)}")
        d = f.val(f"or <32 x i32> {d}, {c}")
    cg.write(_dst(ins), d, "b32")


# (exponent bits, mantissa bits, bias, largest finite value, NaN code)
FP8X2 = {"e4m3x2": (4, 3, 7, 448.0, 0x7F), "e5m2x2": (5, 2, 15, 57344.0, 0x7F)}


def f32_to_fp8(cg, ins, v: str, fmt: str) -> str:
    """An f32 vector -> fp8 codes (<32 x i32>, low 8 bits), rounded to nearest
    even; .satfinite clamps to the largest finite value (NaN stays NaN),
    otherwise overflow gives Inf (e5m2) or NaN (e4m3, which has no Inf)."""
    f = cg.f
    E, M, bias, maxf, nan_code = FP8X2[fmt]
    F = "<32 x float>"
    if "relu" in ins.mods:
        neg = f.val(f"fcmp olt {F} {v}, zeroinitializer")
        v = f.val(f"select <32 x i1> {neg}, {F} zeroinitializer, {F} {v}")
    bits = f.cast("bitcast", F, v, "<32 x i32>")
    sign = f.val(f"and <32 x i32> {bits}, {K(-0x80000000)}")
    sign = f.val(f"lshr <32 x i32> {sign}, {K(24)}")
    absb = f.val(f"and <32 x i32> {bits}, {K(0x7FFFFFFF)}")
    x = f.cast("bitcast", "<32 x i32>", absb, F)
    # quantum 2^(max(e, 1 - bias) - M), e = the unbiased f32 exponent of |x|
    e = f.val(f"lshr <32 x i32> {absb}, {K(23)}")
    e = f.val(f"sub <32 x i32> {e}, {K(127)}")
    e = intr(cg, "llvm.smax.v32i32", T("s32"), [(T("s32"), e), (T("s32"), K(1 - bias))])
    e = intr(cg, "llvm.smin.v32i32", T("s32"), [(T("s32"), e), (T("s32"), K(127))])
    qe = f.val(f"sub <32 x i32> {e}, {K(M)}")
    q = f.cast("bitcast", "<32 x i32>", f.val(f"shl <32 x i32> {f.val(f'add <32 x i32> {qe}, {K(127)}')}, {K(23)}"), F)
    rq = f.cast("bitcast", "<32 x i32>", f.val(f"shl <32 x i32> {f.val(f'sub <32 x i32> {K(127)}, {qe}')}, {K(23)}"), F)
    n = f.val(f"fmul {F} {x}, {rq}")
    n = intr(cg, "llvm.roundeven.v32f32", F, [(F, n)])
    r = f.val(f"fmul {F} {n}, {q}")
    over = f.val(f"fcmp ogt {F} {r}, {splat('float', repr(maxf))}")
    r = f.val(f"select <32 x i1> {over}, {F} {splat('float', repr(maxf))}, {F} {r}")
    # encode: subnormal -> r / 2^(1 - bias - M); normal -> f32 bits rebased
    sub = f.val(f"fcmp olt {F} {r}, {splat('float', repr(2.0 ** (1 - bias)))}")
    sc = f.val(f"fmul {F} {r}, {splat('float', repr(2.0 ** (bias - 1 + M)))}")
    sc = f.cast("fptoui", F, sc, "<32 x i32>")
    rb = f.cast("bitcast", F, r, "<32 x i32>")
    nc = f.val(f"lshr <32 x i32> {rb}, {K(23 - M)}")
    nc = f.val(f"sub <32 x i32> {nc}, {K((127 - bias) << M)}")
    code = f.val(f"select <32 x i1> {sub}, <32 x i32> {sc}, <32 x i32> {nc}")
    if "satfinite" not in ins.mods:
        ovf = 0x7C if fmt == "e5m2x2" else nan_code
        code = f.val(f"select <32 x i1> {over}, <32 x i32> {K(ovf)}, <32 x i32> {code}")
    code = f.val(f"or <32 x i32> {code}, {sign}")
    isnan = f.val(f"fcmp uno {F} {v}, zeroinitializer")
    return f.val(f"select <32 x i1> {isnan}, <32 x i32> {K(nan_code)}, <32 x i32> {code}")


def cvt_fp8x2(cg, ins, dt: str, at: str) -> None:
    """cvt.rn{.satfinite}{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b: d = fp8(a) << 8 | fp8(b)."""
    if at != "f32" or len(ins.srcs) < 2:
        return cg.unsupported(ins)
    f = cg.f
    hi, lo = (f32_to_fp8(cg, ins, cg.read(op, "f32"), dt) for op in ins.srcs[:2])
    d = f.val(f"or <32 x i32> {f.val(f'shl <32 x i32> {hi}, {K(8)}')}, {lo}")
    cg.write(_dst(ins), f.cast("trunc", "<32 x i32>", d, "<32 x i16>"), "b16")


def cvt_tf32(cg, ins, at: str) -> None:
    """cvt.rna.tf32.f32: round to 10 mantissa bits, ties away from zero."""
    f = cg.f
    b = cg.read(ins.srcs[0], "b32")
    v = f.cast("bitcast", "<32 x i32>", b, "<32 x float>")
    nan = f.val(f"fcmp uno <32 x float> {v}, zeroinitializer")
    r = f.val(f"add <32 x i32> {b}, {K(0x1000)}")
    r = f.val(f"and <32 x i32> {r}, {K(-0x2000)}")
    r = f.val(f"select <32 x i1> {nan}, <32 x i32> {K(0x7FFFFFFF)}, <32 x i32> {r}")
    cg.write(_dst(ins), r, "b32")


OPS = {"cvt": op_cvt}
