"""Floating-point arithmetic (PTX ISA 9.7.3 - 9.7.5): f32, f64, f16, bf16, x2.

* IEEE ``.rn`` is LLVM's default arithmetic. ``.rz/.rm/.rp`` run in a small
  ``strictfp`` helper that sets the x86 rounding mode around a constrained
  intrinsic (``llvm.set.rounding``), then restores round-to-nearest.
* ``.ftz`` flushes subnormal f32 inputs and results to signed zero; ``.sat``
  clamps to [0, 1] (NaN -> 0).
* f16/bf16 arithmetic is done in f32 and rounded once to the narrow type:
  f32 has at least 2p+2 bits for both, so the double rounding is innocuous
  for + - * / sqrt (Figueroa, "When is double rounding innocuous?", 1995);
  fma goes through f64.
* ``.approx`` functions (rcp, sqrt, rsqrt, div, ex2, lg2, sin, cos, tanh) use
  the correctly rounded operation or libm: within the PTX error bounds, not
  bit-identical to a GPU (docs/executor.md gives the tolerance).
"""
from __future__ import annotations

from ptxc.backends.llvm.irtext import splat, vt
from ptxc.backends.llvm.ops.common import intr, itype, types_of
from ptxc.backends.llvm.values import lty, vname

HALF = ("f16", "bf16")
PACKED = ("f16x2", "bf16x2")
MODES = {"rz": 0, "rn": 1, "rp": 2, "rm": 3}


def K(v) -> str:
    """A 32-lane i32 constant."""
    return splat("i32", v)


def _dst(ins):
    return ins.results[0] if ins.results else None


def rmode(ins) -> str:
    for m in ins.mods:
        if m in ("rz", "rm", "rp"):
            return m
    return "rn"


# ------------------------------------------------------ building blocks
def fop(cg, op: str, lt: str, args: list[str], mode: str = "rn") -> str:
    """Binary IEEE op (fadd fsub fmul fdiv) or 'fma'/'sqrt' in rounding ``mode``."""
    V = vt(lt)
    if mode == "rn":
        if op == "fma":
            return intr(cg, f"llvm.fma.{vname(lt)}", V, [(V, a) for a in args])
        if op == "sqrt":
            return intr(cg, f"llvm.sqrt.{vname(lt)}", V, [(V, args[0])])
        return cg.f.val(f"{op} {V} {args[0]}, {args[1]}")
    return cg.f.call(V, directed_helper(cg, op, lt, len(args), mode), [(V, a) for a in args])


CONSTRAINED_OPS = ("fadd", "fsub", "fmul", "fdiv", "fma", "sqrt")


def define_rounded(cg, name: str, ret: str, arg_types: list[str], iname: str, mode: str) -> str:
    """Define (once) a strictfp helper ``name`` that calls the constrained
    intrinsic ``iname`` under static rounding ``mode``, then restores .rn."""
    if name not in cg.helpers:
        params = ", ".join(f"{t} %a{i}" for i, t in enumerate(arg_types))
        md = 'metadata !"round.dynamic", metadata !"fpexcept.ignore"'
        cg.decls.add(f"declare {ret} @{iname}({', '.join(arg_types)}, metadata, metadata)")
        cg.decls.add("declare void @llvm.set.rounding(i32)")
        cg.helpers[name] = (
            f"define internal {ret} @{name}({params}) noinline strictfp {{\n"
            f"entry:\n  call void @llvm.set.rounding(i32 {MODES[mode]}) strictfp\n"
            f"  %r = call {ret} @{iname}({params}, {md}) strictfp\n"
            f"  call void @llvm.set.rounding(i32 1) strictfp\n  ret {ret} %r\n}}")
    return name


def directed_helper(cg, op: str, lt: str, n: int, mode: str) -> str:
    """A strictfp helper computing ``op`` with the given static rounding."""
    if op not in CONSTRAINED_OPS:
        raise KeyError(op)
    V = vt(lt)
    return define_rounded(cg, f"{op}_{mode}_{vname(lt)}", V, [V] * n,
                          f"llvm.experimental.constrained.{op}.{vname(lt)}", mode)


def directed_cast(cg, op: str, ft: str, tt: str, v: str, mode: str) -> str:
    """fptrunc / sitofp / uitofp with a static rounding mode."""
    F, Tt = vt(ft), vt(tt)
    name = define_rounded(cg, f"{op}_{mode}_{vname(ft)}_{vname(tt)}", Tt, [F],
                          f"llvm.experimental.constrained.{op}.{vname(tt)}.{vname(ft)}", mode)
    return cg.f.call(Tt, name, [(F, v)])


def ftz32(cg, v: str) -> str:
    """Flush f32 subnormals to signed zero."""
    f = cg.f
    bits = f.cast("bitcast", "<32 x float>", v, "<32 x i32>")
    exp = f.val(f"and <32 x i32> {bits}, {splat('i32', 0x7F800000)}")
    sub = f.val(f"icmp eq <32 x i32> {exp}, zeroinitializer")
    sign = f.val(f"and <32 x i32> {bits}, {splat('i32', -0x80000000)}")
    r = f.val(f"select <32 x i1> {sub}, <32 x i32> {sign}, <32 x i32> {bits}")
    return f.cast("bitcast", "<32 x i32>", r, "<32 x float>")


def saturate(cg, lt: str, v: str) -> str:
    """Clamp to [0, 1]; NaN -> 0."""
    V = vt(lt)
    f = cg.f
    one = "1.0" if lt != "half" else "0xH3C00"
    lo = intr(cg, f"llvm.maxnum.{vname(lt)}", V, [(V, v), (V, "zeroinitializer")])
    hi = intr(cg, f"llvm.minnum.{vname(lt)}", V, [(V, lo), (V, splat(lt, one))])
    nan = f.val(f"fcmp uno {V} {v}, zeroinitializer")
    return f.val(f"select <32 x i1> {nan}, {V} zeroinitializer, {V} {hi}")


# --------------------------------------------------- half <-> float
def half_to_float(cg, bits16: str, t: str) -> str:
    f = cg.f
    if t == "bf16":
        w = f.cast("zext", "<32 x i16>", bits16, "<32 x i32>")
        w = f.val(f"shl <32 x i32> {w}, {splat('i32', 16)}")
        return f.cast("bitcast", "<32 x i32>", w, "<32 x float>")
    h = f.cast("bitcast", "<32 x i16>", bits16, "<32 x half>")
    return f.cast("fpext", "<32 x half>", h, "<32 x float>")


def float_to_half(cg, v: str, t: str, mode: str = "rn") -> str:
    """f32 -> f16/bf16 bits with rounding ``mode``."""
    f = cg.f
    if t == "bf16":
        return float_to_bf16(cg, v, mode)
    if mode == "rn":
        h = f.cast("fptrunc", "<32 x float>", v, "<32 x half>")
    else:
        h = directed_cast(cg, "fptrunc", "float", "half", v, mode)
    return f.cast("bitcast", "<32 x half>", h, "<32 x i16>")


def float_to_bf16(cg, v: str, mode: str) -> str:
    f = cg.f
    b = f.cast("bitcast", "<32 x float>", v, "<32 x i32>")
    nan = f.val(f"fcmp uno <32 x float> {v}, zeroinitializer")
    if mode == "rn":
        lsb = f.val(f"and <32 x i32> {f.val(f'lshr <32 x i32> {b}, {K(16)}')}, {splat('i32', 1)}")
        r = f.val(f"add <32 x i32> {b}, {f.val(f'add <32 x i32> {lsb}, {K(0x7FFF)}')}")
    elif mode == "rz":
        r = b
    else:   # rp / rm: away from zero when the sign matches the direction and bits are lost
        neg = f.val(f"icmp slt <32 x i32> {b}, zeroinitializer")
        lost = f.val(f"icmp ne <32 x i32> {f.val(f'and <32 x i32> {b}, {K(0xFFFF)}')}, zeroinitializer")
        up = f.val(f"xor <32 x i1> {neg}, {splat('i1', 'true' if mode == 'rp' else 'false')}")
        bump = f.val(f"and <32 x i1> {up}, {lost}")
        r = f.val(f"add <32 x i32> {b}, {f.val(f'select <32 x i1> {bump}, <32 x i32> {K(0x10000)}, <32 x i32> zeroinitializer')}")
    r = f.val(f"lshr <32 x i32> {r}, {splat('i32', 16)}")
    qn = f.val(f"or <32 x i32> {f.val(f'lshr <32 x i32> {b}, {K(16)}')}, {splat('i32', 0x40)}")
    r = f.val(f"select <32 x i1> {nan}, <32 x i32> {qn}, <32 x i32> {r}")
    return f.cast("trunc", "<32 x i32>", r, "<32 x i16>")


def ftz16(cg, bits16: str) -> str:
    f = cg.f
    exp = f.val(f"and <32 x i16> {bits16}, {splat('i16', 0x7C00)}")
    sub = f.val(f"icmp eq <32 x i16> {exp}, zeroinitializer")
    sign = f.val(f"and <32 x i16> {bits16}, {splat('i16', -0x8000)}")
    return f.val(f"select <32 x i1> {sub}, <32 x i16> {sign}, <32 x i16> {bits16}")


def split2(cg, v32: str) -> list[str]:
    f = cg.f
    lo = f.cast("trunc", "<32 x i32>", v32, "<32 x i16>")
    hi = f.cast("trunc", "<32 x i32>", f.val(f"lshr <32 x i32> {v32}, {splat('i32', 16)}"), "<32 x i16>")
    return [lo, hi]


def join2(cg, lo: str, hi: str) -> str:
    f = cg.f
    l32 = f.cast("zext", "<32 x i16>", lo, "<32 x i32>")
    h32 = f.cast("zext", "<32 x i16>", hi, "<32 x i32>")
    return f.val(f"or <32 x i32> {l32}, {f.val(f'shl <32 x i32> {h32}, {K(16)}')}")


# --------------------------------------------------------- apply ops
def apply(cg, ins, n: int, compute, t: str | None = None, out_t: str | None = None) -> None:
    """Read n sources, compute(lt, vals, mode) on float/double vectors, write.

    Handles .ftz/.sat and the f16/bf16 (packed) types."""
    t = t or itype(ins)
    mode = rmode(ins)
    ftz, sat = "ftz" in ins.mods, "sat" in ins.mods
    relu = "relu" in ins.mods
    if t in ("f32", "f64"):
        lt = lty(t)
        vals = [cg.read(o, t) for o in ins.srcs[:n]]
        if ftz and t == "f32":
            vals = [ftz32(cg, v) for v in vals]
        r = compute(lt, vals, mode)
        if ftz and t == "f32":
            r = ftz32(cg, r)
        if sat:
            r = saturate(cg, lt, r)
        if relu:
            r = relu_f(cg, lt, r)
        return cg.write(_dst(ins), r, out_t or t)
    if t in HALF or t in PACKED:
        base = t[:-2] if t in PACKED else t
        width = "b32" if t in PACKED else "b16"
        raws = [cg.read(o, width) for o in ins.srcs[:n]]
        parts = [split2(cg, r) for r in raws] if t in PACKED else [[r] for r in raws]
        outs = []
        for k in range(len(parts[0])):
            vals = [p[k] for p in parts]
            if ftz:
                vals = [ftz16(cg, v) for v in vals]
            fl = [half_to_float(cg, v, base) for v in vals]
            r = compute("float", fl, "rn")
            if sat:
                r = saturate(cg, "float", r)
            if relu:
                r = relu_f(cg, "float", r)
            rb = float_to_half(cg, r, base, mode)
            outs.append(ftz16(cg, rb) if ftz else rb)
        res = join2(cg, *outs) if t in PACKED else outs[0]
        return cg.write(_dst(ins), res, width)
    return cg.unsupported(ins)


def relu_f(cg, lt: str, r: str) -> str:
    V = vt(lt)
    f = cg.f
    neg = f.val(f"fcmp olt {V} {r}, zeroinitializer")
    return f.val(f"select <32 x i1> {neg}, {V} zeroinitializer, {V} {r}")


def _binary(op):
    def h(cg, ins):
        apply(cg, ins, 2, lambda lt, v, mode: fop(cg, op, lt, v, mode))
    return h


fadd, fsub, fmul = _binary("fadd"), _binary("fsub"), _binary("fmul")


def ffma(cg, ins):
    t = itype(ins)

    def comp(lt, v, mode):
        if t in HALF or t in PACKED:       # exact product, one rounding to f64, then narrow
            d = [cg.f.cast("fpext", "<32 x float>", x, "<32 x double>") for x in v]
            r = fop(cg, "fma", "double", d)
            return cg.f.cast("fptrunc", "<32 x double>", r, "<32 x float>")
        return fop(cg, "fma", lt, v, mode)
    apply(cg, ins, 3, comp)


def fdiv(cg, ins):
    apply(cg, ins, 2, lambda lt, v, mode: fop(cg, "fdiv", lt, v, mode))


def fabs(cg, ins):
    _signbits(cg, ins, "and", 0)


def fneg(cg, ins):
    _signbits(cg, ins, "xor", 1)


def _signbits(cg, ins, op: str, flip: int) -> None:
    """abs / neg as bit operations on the sign bit (NaN keeps its payload)."""
    t = itype(ins)
    n = {"f32": 32, "f64": 64, "f16": 16, "bf16": 16, "f16x2": 32, "bf16x2": 32}.get(t)
    if n is None:
        return cg.unsupported(ins)
    f = cg.f
    it = f"i{n}"
    if t in PACKED:
        m = 0x80008000
    else:
        m = 1 << (n - 1)
    if not flip:
        m = ~m & ((1 << n) - 1)
    if m >= 1 << (n - 1):
        m -= 1 << n
    v = cg.read(ins.srcs[0], "b%d" % n)
    if "ftz" in ins.mods and t == "f32":
        v = f.cast("bitcast", "<32 x float>", ftz32(cg, f.cast("bitcast", "<32 x i32>", v, "<32 x float>")), "<32 x i32>")
    r = f.val(f"{op} {vt(it)} {v}, {splat(it, m)}")
    cg.write(_dst(ins), r, "b%d" % n)


def fminmax(cg, ins, kind: str) -> None:
    nan = "NaN" in ins.mods or "nan" in ins.mods
    name = ("minimum" if kind == "min" else "maximum") if nan else (kind + "imumnum")

    def comp(lt, v, mode):
        V = vt(lt)
        r = intr(cg, f"llvm.{name}.{vname(lt)}", V, [(V, v[0]), (V, v[1])])
        if len(v) > 2:
            r = intr(cg, f"llvm.{name}.{vname(lt)}", V, [(V, r), (V, v[2])])
        return r
    apply(cg, ins, min(len(ins.srcs), 3), comp)


def packed_int_minmax(cg, ins, kind, a, b) -> None:
    t = itype(ins)
    s = "s" if t.startswith("s") else "u"
    outs = []
    for x, y in zip(split2(cg, a), split2(cg, b)):
        outs.append(intr(cg, f"llvm.{s}{kind}.v32i16", "<32 x i16>", [("<32 x i16>", x), ("<32 x i16>", y)]))
    cg.write(_dst(ins), join2(cg, *outs), "b32")


# ------------------------------------------------------------ SFU ops
def _unary(fn):
    def h(cg, ins):
        apply(cg, ins, 1, lambda lt, v, mode: fn(cg, lt, v[0], mode))
    return h


def _rcp(cg, lt, x, mode):
    one = splat(lt, "1.0")
    return fop(cg, "fdiv", lt, [one, x], mode)


def _sqrt(cg, lt, x, mode):
    return fop(cg, "sqrt", lt, [x], mode)


def _rsqrt(cg, lt, x, mode):
    return fop(cg, "fdiv", lt, [splat(lt, "1.0"), fop(cg, "sqrt", lt, [x])])


def _libm(name):
    def fn(cg, lt, x, mode):
        V = vt(lt)
        return intr(cg, f"llvm.{name}.{vname(lt)}", V, [(V, x)])
    return fn


def op_copysign(cg, ins):
    def comp(lt, v, mode):      # PTX: d = b with the sign of a
        V = vt(lt)
        return intr(cg, f"llvm.copysign.{vname(lt)}", V, [(V, v[1]), (V, v[0])])
    apply(cg, ins, 2, comp)


def op_testp(cg, ins):
    t = itype(ins)
    lt = lty(t)
    V = vt(lt)
    f = cg.f
    x = cg.read(ins.srcs[0], t)
    ax = intr(cg, f"llvm.fabs.{vname(lt)}", V, [(V, x)])
    inf = "0x7FF0000000000000"
    small = "0x3810000000000000" if t == "f32" else "0x0010000000000000"
    if "finite" in ins.mods:
        r = f.val(f"fcmp olt {V} {ax}, {splat(lt, inf)}")
    elif "infinite" in ins.mods:
        r = f.val(f"fcmp oeq {V} {ax}, {splat(lt, inf)}")
    elif "number" in ins.mods:
        r = f.val(f"fcmp ord {V} {x}, {x}")
    elif "notanumber" in ins.mods:
        r = f.val(f"fcmp uno {V} {x}, {x}")
    elif "normal" in ins.mods:
        a = f.val(f"fcmp oge {V} {ax}, {splat(lt, small)}")
        b = f.val(f"fcmp olt {V} {ax}, {splat(lt, inf)}")
        r = f.val(f"and <32 x i1> {a}, {b}")
    else:    # subnormal
        a = f.val(f"fcmp olt {V} {ax}, {splat(lt, small)}")
        b = f.val(f"fcmp one {V} {ax}, zeroinitializer")
        r = f.val(f"and <32 x i1> {a}, {b}")
    cg.write(_dst(ins), r, "pred")


OPS = {
    "rcp": _unary(_rcp), "sqrt": _unary(_sqrt), "rsqrt": _unary(_rsqrt),
    "sin": _unary(_libm("sin")), "cos": _unary(_libm("cos")), "ex2": _unary(_libm("exp2")),
    "lg2": _unary(_libm("log2")), "tanh": _unary(_libm("tanh")), "fma": ffma,
    "copysign": op_copysign, "testp": op_testp,
}
del types_of
