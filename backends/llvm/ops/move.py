"""mov, selp, slct, setp and set (PTX ISA 9.7.3.x, 9.7.8 data movement);
cvt is in convert.py.

setp/set compare integers (signed or unsigned by the type), f32/f64
(ordered or unordered, ``.ftz`` flushing subnormal f32 inputs) and
f16/bf16 (f16x2/bf16x2: one predicate per half), then combine with the
optional BoolOp predicate.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm.ops.common import T, is_float, is_signed, itype, sel, splat, types_of
from ptxc.backends.llvm.ops.float_arith import PACKED, ftz32, half_to_float, join2, split2


def _dst(ins):
    return ins.results[0] if ins.results else None


# ------------------------------------------------------------ moves
def op_mov(cg, ins):
    t = itype(ins)
    if any(m in ("v2", "v4", "v8") for m in ins.mods):
        # mov.vN d, a: a vector register or {..} list per component; every
        # source component is read before any destination component is written
        dst, src = ins.dsts[0] if ins.dsts else None, ins.srcs[0]
        if not (isinstance(dst, ir.Vec) and isinstance(src, ir.Vec)
                and len(dst.items) == len(src.items)):
            return cg.unsupported(ins, "mov of vector registers")
        vals = [None if isinstance(o, ir.Sink) else cg.read(o, t) for o in src.items]
        for d, v in zip(dst.items, vals):
            if v is not None:
                cg.write(d, v, t)
        return
    dst = ins.dsts[0] if ins.dsts else None
    if isinstance(dst, ir.Vec):
        v = cg.read(ins.srcs[0], t)
        return cg.write_unpacked(dst, v, t, None)
    v = cg.read(ins.srcs[0], t)
    cg.write(_dst(ins), v, t)


def op_selp(cg, ins):
    t = itype(ins)
    a, b = (cg.read(o, t) for o in ins.srcs[:2])
    c = cg.read(ins.srcs[2], "pred")
    cg.write(_dst(ins), sel(cg, c, t, a, b), t)


def op_slct(cg, ins):
    ts = types_of(ins)
    t, ct = ts[0], ts[-1]
    a, b = (cg.read(o, t) for o in ins.srcs[:2])
    c = cg.read(ins.srcs[2], ct)
    f = cg.f
    if ct == "f32":
        if "ftz" in ins.mods:
            c = ftz32(cg, c)
        ge = f.val(f"fcmp oge <32 x float> {c}, zeroinitializer")
    else:
        ge = f.val(f"icmp sge <32 x i32> {c}, zeroinitializer")
    cg.write(_dst(ins), sel(cg, ge, t, a, b), t)


# ------------------------------------------------------------ compares
INT_CMP = {"eq": "eq", "ne": "ne", "lo": "ult", "ls": "ule", "hi": "ugt", "hs": "uge"}
FLT_CMP = {"eq": "oeq", "ne": "one", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge",
           "equ": "ueq", "neu": "une", "ltu": "ult", "leu": "ule", "gtu": "ugt", "geu": "uge",
           "num": "ord", "nan": "uno"}
BOOL_OPS = ("and", "or", "xor")


def compare(cg, ins, t: str, a_op, b_op) -> list[str]:
    """The comparison as <32 x i1> (two of them for f16x2/bf16x2)."""
    op = next(m for m in ins.mods if m in FLT_CMP or m in INT_CMP or m in ("lt", "le", "gt", "ge"))
    f = cg.f
    if is_float(t):
        pred = FLT_CMP[op]
        if t in ("f32", "f64"):
            a, b = cg.read(a_op, t), cg.read(b_op, t)
            if "ftz" in ins.mods and t == "f32":
                a, b = ftz32(cg, a), ftz32(cg, b)
            return [f.val(f"fcmp {pred} {T(t)} {a}, {b}")]
        base = t[:-2] if t in PACKED else t
        width = "b32" if t in PACKED else "b16"
        a, b = cg.read(a_op, width), cg.read(b_op, width)
        pa, pb = (split2(cg, a), split2(cg, b)) if t in PACKED else ([a], [b])
        out = []
        for x, y in zip(pa, pb):
            fx, fy = half_to_float(cg, x, base), half_to_float(cg, y, base)
            out.append(f.val(f"fcmp {pred} <32 x float> {fx}, {fy}"))
        return out
    a, b = cg.read(a_op, t), cg.read(b_op, t)
    pred = INT_CMP[op] if op in INT_CMP else ("s" if is_signed(t) else "u") + op
    return [f.val(f"icmp {pred} {T(t)} {a}, {b}")]


def combine(cg, ins, r: str, c_op) -> tuple[str, str]:
    """(p, q) after the optional BoolOp with predicate c."""
    f = cg.f
    notr = f.val(f"xor <32 x i1> {r}, {splat('i1', 'true')}")
    bop = next((m for m in ins.mods if m in BOOL_OPS), None)
    if bop is None or c_op is None:
        return r, notr
    c = cg.read(c_op, "pred")
    return f.val(f"{bop} <32 x i1> {r}, {c}"), f.val(f"{bop} <32 x i1> {notr}, {c}")


def op_setp(cg, ins):
    t = itype(ins)
    dsts = cg.dst_list(ins)
    rs = compare(cg, ins, t, ins.srcs[0], ins.srcs[1])
    c_op = ins.srcs[2] if len(ins.srcs) > 2 else None
    if len(rs) == 2:                      # f16x2: one predicate per half
        for d, r in zip(dsts, rs):
            cg.write(d, combine(cg, ins, r, c_op)[0], "pred")
        return
    p, q = combine(cg, ins, rs[0], c_op)
    cg.write(dsts[0], p, "pred")
    if len(dsts) > 1:
        cg.write(dsts[1], q, "pred")


def op_set(cg, ins):
    ts = types_of(ins)
    dt, st = ts[0], ts[-1]
    rs = compare(cg, ins, st, ins.srcs[0], ins.srcs[1])
    c_op = ins.srcs[2] if len(ins.srcs) > 2 else None
    outs = []
    for r in rs:
        p, _ = combine(cg, ins, r, c_op)
        if dt == "f32":
            outs.append(sel(cg, p, "f32", splat("float", "1.0"), "zeroinitializer"))
        elif dt in ("f16", "bf16", "f16x2", "bf16x2"):
            one = 0x3C00 if dt.startswith("f16") else 0x3F80
            outs.append(sel(cg, p, "b16", splat("i16", one), "zeroinitializer"))
        elif len(rs) == 2:                  # integer result of a packed compare: 0xFFFF per half
            outs.append(cg.f.cast("sext", "<32 x i1>", p, "<32 x i16>"))
        else:
            outs.append(cg.f.cast("sext", "<32 x i1>", p, T(dt)))
    if len(outs) == 2:
        return cg.write(_dst(ins), join2(cg, *outs), "b32")
    cg.write(_dst(ins), outs[0], dt if dt not in ("f16", "bf16") else "b16")


OPS = {"mov": op_mov, "selp": op_selp, "slct": op_slct, "setp": op_setp, "set": op_set}
