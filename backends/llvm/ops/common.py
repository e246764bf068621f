"""Helpers shared by the opcode lowerings (ops_*.py)."""
from __future__ import annotations

from ptxc.ir.types import instr_types

from ptxc.backends.llvm.irtext import splat, vt
from ptxc.backends.llvm.values import bits_of, is_signed, lty, vname

__all__ = ["T", "vop", "intr", "itype", "types_of", "srcs", "splat", "vt", "lty", "bits_of",
           "is_signed", "vname", "bcast_mask", "sel", "cmp", "ROUND"]

ROUND = ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi", "rs")


def T(t: str) -> str:
    """The 32-lane LLVM vector type of PTX type ``t``."""
    return vt(lty(t))


def vop(cg, op: str, t: str, a: str, b: str) -> str:
    return cg.f.val(f"{op} {T(t)} {a}, {b}")


def cmp(cg, pred: str, t: str, a: str, b: str) -> str:
    kind = "fcmp" if lty(t) in ("float", "double") else "icmp"
    return cg.f.val(f"{kind} {pred} {T(t)} {a}, {b}")


def sel(cg, c: str, t: str, a: str, b: str) -> str:
    return cg.f.val(f"select <32 x i1> {c}, {T(t)} {a}, {T(t)} {b}")


def intr(cg, name: str, rt: str, args: list[tuple[str, str]], attrs: str = "") -> str | None:
    """Call an LLVM intrinsic (or helper), declaring it on first use."""
    cg.decls.add(f"declare {rt} @{name}({', '.join(t for t, _ in args)}){attrs}")
    return cg.f.call(rt, name, args)


def vintr(cg, base: str, t: str, *vals: str) -> str:
    """``llvm.<base>.v32<t>(vals...)`` returning the same vector type."""
    lt = lty(t)
    return intr(cg, f"llvm.{base}.{vname(lt)}", vt(lt), [(vt(lt), v) for v in vals])


def types_of(ins) -> list[str]:
    return instr_types(ins.mods)


def itype(ins, default: str = "b32") -> str:
    ts = instr_types(ins.mods)
    return ts[-1] if ts else default


def srcs(cg, ins, t: str, n: int | None = None) -> list[str]:
    ops = ins.srcs if n is None else ins.srcs[:n]
    return [cg.read(o, t) for o in ops]


def bcast_mask(cg, m_i32: str) -> str:
    return cg.f.cast("bitcast", "i32", m_i32, "<32 x i1>")


def sint(t: str) -> str:
    """The signed integer type of the same width (u32 -> s32)."""
    return "s%d" % bits_of(t)


def uint(t: str) -> str:
    return "u%d" % bits_of(t)


def is_float(t: str) -> bool:
    return t in ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2", "tf32")
