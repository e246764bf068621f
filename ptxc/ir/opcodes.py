"""The opcode table: everything ptxc knows about an opcode, in one place.

One row per base opcode (the word before the first dot). A row says how many
destination operands the instruction writes (this may depend on modifiers),
its family (which decides its counting class together with its type), whether
it ends a block, whether it reads/writes memory, whether it is a CTA barrier or
a warp collective, and its FLOP weight (METRICS.md: add/sub/mul 1, fma/mad 2).

The grammar has one generic instruction rule; the parser asks this table
whether an opcode exists (unknown opcode = parse error) and which operands are
destinations.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from ptxc.ir.types import instr_types

# families; the counting class of 'arith' and 'sfu' ops depends on their type
ARITH, MOVE, LOAD, STORE, ATOMIC, CONTROL, BARRIER, SFU, CONVERT, TENSOR, \
    TEXTURE, MISC, COMPARE, BITS = ("arith", "move", "load", "store", "atomic", "control",
                                    "barrier", "sfu", "convert", "tensor", "texture",
                                    "misc", "compare", "bits")

NDst = Union[int, Callable[[tuple], int]]


@dataclass(frozen=True, slots=True)
class OpInfo:
    name: str
    family: str
    ndst: NDst = 1
    terminator: bool = False   # ends a basic block (bra, brx, ret, exit, trap)
    branch: bool = False       # counted in METRICS 'branch' (bra, brx)
    reads_mem: bool = False
    writes_mem: bool = False
    barrier: bool = False      # CTA-wide barrier (bar.sync, barrier.sync, bar.red ...)
    warp: bool = False         # warp collective (shfl, vote, match, redux, activemask, bar.warp)
    flops: int = 0             # per lane, before the x2 of packed types
    sets_cc: bool = False      # writes the carry flag when .cc is present
    uses_cc: bool = False      # reads the carry flag (addc, subc, madc)
    side_effect: bool = False  # observable effect besides its results (fences, prefetch ...)

    def num_dsts(self, mods: tuple) -> int:
        return self.ndst(mods) if callable(self.ndst) else self.ndst


def _mbarrier_ndst(mods: tuple) -> int:
    if any(m in mods for m in ("init", "inval", "expect_tx", "complete_tx")):
        return 0
    if "arrive" in mods or "arrive_drop" in mods or "test_wait" in mods \
            or "try_wait" in mods or "pending_count" in mods:
        return 1
    return 0


def _bar_ndst(mods: tuple) -> int:
    return 1 if "red" in mods else 0


def _cp_ndst(mods: tuple) -> int:
    return 0


def _wmma_ndst(mods: tuple) -> int:
    return 0 if "store" in mods else 1


def _tcgen_ndst(mods: tuple) -> int:
    return 1 if ("ld" in mods or "alloc" in mods) and "st" not in mods else 0


def _atom_ndst(mods: tuple) -> int:
    return 1


_ROWS = [
    # arithmetic (integer or float by type)
    OpInfo("add", ARITH, flops=1, sets_cc=True), OpInfo("sub", ARITH, flops=1, sets_cc=True),
    OpInfo("mul", ARITH, flops=1), OpInfo("mad", ARITH, flops=2, sets_cc=True),
    OpInfo("fma", ARITH, flops=2), OpInfo("div", ARITH), OpInfo("rem", ARITH),
    OpInfo("abs", ARITH), OpInfo("neg", ARITH), OpInfo("min", ARITH), OpInfo("max", ARITH),
    OpInfo("mul24", ARITH), OpInfo("mad24", ARITH), OpInfo("sad", ARITH),
    OpInfo("addc", ARITH, sets_cc=True, uses_cc=True), OpInfo("subc", ARITH, sets_cc=True, uses_cc=True),
    OpInfo("madc", ARITH, sets_cc=True, uses_cc=True), OpInfo("copysign", ARITH),
    OpInfo("testp", COMPARE), OpInfo("dp2a", ARITH), OpInfo("dp4a", ARITH),
    OpInfo("vabsdiff", ARITH), OpInfo("vabsdiff2", ARITH), OpInfo("vabsdiff4", ARITH),
    OpInfo("vadd", ARITH), OpInfo("vadd2", ARITH), OpInfo("vadd4", ARITH),
    OpInfo("vsub", ARITH), OpInfo("vsub2", ARITH), OpInfo("vsub4", ARITH),
    OpInfo("vmad", ARITH), OpInfo("vmax", ARITH), OpInfo("vmax2", ARITH), OpInfo("vmax4", ARITH),
    OpInfo("vmin", ARITH), OpInfo("vmin2", ARITH), OpInfo("vmin4", ARITH),
    OpInfo("vavrg2", ARITH), OpInfo("vavrg4", ARITH), OpInfo("vset", COMPARE),
    OpInfo("vset2", COMPARE), OpInfo("vset4", COMPARE), OpInfo("vshl", BITS), OpInfo("vshr", BITS),
    # special functions (MUFU)
    OpInfo("rcp", SFU), OpInfo("sqrt", SFU), OpInfo("rsqrt", SFU), OpInfo("sin", SFU),
    OpInfo("cos", SFU), OpInfo("lg2", SFU), OpInfo("ex2", SFU), OpInfo("tanh", SFU),
    # comparison and selection
    OpInfo("setp", COMPARE), OpInfo("set", COMPARE), OpInfo("selp", MOVE), OpInfo("slct", MOVE),
    # logic and bits
    OpInfo("and", BITS), OpInfo("or", BITS), OpInfo("xor", BITS), OpInfo("not", BITS),
    OpInfo("cnot", BITS), OpInfo("lop3", BITS), OpInfo("shl", BITS), OpInfo("shr", BITS),
    OpInfo("shf", BITS), OpInfo("bfe", BITS), OpInfo("bfi", BITS), OpInfo("bfind", BITS),
    OpInfo("brev", BITS), OpInfo("clz", BITS), OpInfo("popc", BITS), OpInfo("prmt", BITS),
    OpInfo("bmsk", BITS), OpInfo("fns", BITS), OpInfo("szext", BITS),
    # data movement and conversion
    OpInfo("mov", MOVE), OpInfo("cvt", CONVERT), OpInfo("cvta", MOVE), OpInfo("cvt.pack", CONVERT),
    OpInfo("isspacep", COMPARE), OpInfo("mapa", MOVE), OpInfo("getctarank", MOVE),
    OpInfo("ld", LOAD, reads_mem=True), OpInfo("ldu", LOAD, reads_mem=True),
    OpInfo("st", STORE, ndst=0, writes_mem=True),
    OpInfo("prefetch", MISC, ndst=0, side_effect=True), OpInfo("prefetchu", MISC, ndst=0, side_effect=True),
    OpInfo("ldmatrix", TENSOR, reads_mem=True, warp=True), OpInfo("stmatrix", TENSOR, ndst=0, writes_mem=True, warp=True),
    OpInfo("cp", MISC, ndst=_cp_ndst, reads_mem=True, writes_mem=True, side_effect=True),
    OpInfo("cp.async", MISC, ndst=0, reads_mem=True, writes_mem=True, side_effect=True),
    OpInfo("createpolicy", MISC), OpInfo("discard", MISC, ndst=0, side_effect=True),
    OpInfo("applypriority", MISC, ndst=0, side_effect=True),
    OpInfo("alloca", MISC), OpInfo("stacksave", MISC), OpInfo("stackrestore", MISC, ndst=0, side_effect=True),
    # atomics
    OpInfo("atom", ATOMIC, ndst=_atom_ndst, reads_mem=True, writes_mem=True),
    OpInfo("red", ATOMIC, ndst=0, reads_mem=True, writes_mem=True),
    OpInfo("mbarrier", BARRIER, ndst=_mbarrier_ndst, reads_mem=True, writes_mem=True, side_effect=True),
    # control flow
    OpInfo("bra", CONTROL, ndst=0, terminator=True, branch=True),
    OpInfo("brx", CONTROL, ndst=0, terminator=True, branch=True),
    OpInfo("call", CONTROL, ndst=0, reads_mem=True, writes_mem=True, side_effect=True),
    OpInfo("ret", CONTROL, ndst=0, terminator=True), OpInfo("exit", CONTROL, ndst=0, terminator=True),
    OpInfo("trap", CONTROL, ndst=0, terminator=True), OpInfo("brkpt", CONTROL, ndst=0, side_effect=True),
    OpInfo("nanosleep", MISC, ndst=0, side_effect=True), OpInfo("pmevent", MISC, ndst=0, side_effect=True),
    # barriers, fences, warp collectives
    OpInfo("bar", BARRIER, ndst=_bar_ndst, barrier=True, side_effect=True),
    OpInfo("barrier", BARRIER, ndst=_bar_ndst, barrier=True, side_effect=True),
    OpInfo("membar", BARRIER, ndst=0, side_effect=True), OpInfo("fence", BARRIER, ndst=0, side_effect=True),
    OpInfo("griddepcontrol", BARRIER, ndst=0, side_effect=True),
    OpInfo("elect", MISC, warp=True),
    OpInfo("shfl", MISC, warp=True), OpInfo("vote", MISC, warp=True), OpInfo("match", MISC, warp=True),
    OpInfo("redux", MISC, warp=True), OpInfo("activemask", MISC, warp=True),
    # tensor cores
    OpInfo("wmma", TENSOR, ndst=_wmma_ndst, reads_mem=True, writes_mem=True, warp=True),
    OpInfo("mma", TENSOR, warp=True), OpInfo("wgmma", TENSOR, ndst=lambda m: 0 if "fence" in m or "commit_group" in m or "wait_group" in m else 1, warp=True),
    OpInfo("tcgen05", TENSOR, ndst=_tcgen_ndst, warp=True, side_effect=True),
    # textures and surfaces
    OpInfo("tex", TEXTURE, reads_mem=True), OpInfo("tld4", TEXTURE, reads_mem=True),
    OpInfo("txq", TEXTURE), OpInfo("suld", TEXTURE, reads_mem=True),
    OpInfo("sust", TEXTURE, ndst=0, writes_mem=True), OpInfo("sured", TEXTURE, ndst=0, writes_mem=True),
    OpInfo("suq", TEXTURE), OpInfo("istypep", COMPARE),
]

OPCODES: dict[str, OpInfo] = {row.name: row for row in _ROWS}

# counting classes reported by the `count` pass (METRICS.md / issue 4)
CLASSES = ("integer", "fp32", "fp64", "fp16", "tensor", "load", "store", "atomic",
           "control", "barrier", "special", "conversion", "move", "other")


def lookup(opcode: str) -> OpInfo | None:
    """The row for a base opcode, or None if ptxc does not know it."""
    return OPCODES.get(opcode)


def fp_kind(mods: tuple) -> str | None:
    """'fp32' / 'fp64' / 'fp16' if the instruction's (first) type is a float type."""
    for t in instr_types(mods):
        if t in ("f32", "tf32"):
            return "fp32"
        if t == "f64":
            return "fp64"
        if t in ("f16", "bf16", "f16x2", "bf16x2"):
            return "fp16"
        return None
    return None


def count_class(info: OpInfo, mods: tuple) -> str:
    """The counting class of one instruction (see CLASSES)."""
    fam = info.family
    if fam in (ARITH, COMPARE, BITS):
        return fp_kind(mods) or "integer"
    if fam == SFU:
        return "special"
    return {LOAD: "load", STORE: "store", ATOMIC: "atomic", CONTROL: "control",
            BARRIER: "barrier", CONVERT: "conversion", MOVE: "move",
            TENSOR: "tensor", TEXTURE: "load"}.get(fam, "other")


def flop_weight(info: OpInfo, mods: tuple) -> tuple[str | None, int]:
    """(flop counter name, FLOPs per pred-on lane) for one instruction.

    METRICS.md: add, sub, mul = 1; fma, mad = 2 on f32/f64/f16; f16x2 and
    bf16x2 count 2 per lane per op; rcp sqrt rsqrt sin cos lg2 ex2 tanh on f32
    count 1 in flop_count_sp_special.
    """
    kind = fp_kind(mods)
    if info.family == SFU:
        return ("flop_count_sp_special", 1) if kind == "fp32" else (None, 0)
    if not info.flops or kind is None:
        return (None, 0)
    name = {"fp32": "flop_count_sp", "fp64": "flop_count_dp", "fp16": "flop_count_hp"}[kind]
    packed = 2 if any(t in ("f16x2", "bf16x2") for t in instr_types(mods)) else 1
    return (name, info.flops * packed)


def _setp_arity(mods: tuple) -> tuple:
    return (4,) if any(m in ("and", "or", "xor") for m in mods) else (3,)


def _set_arity(mods: tuple) -> tuple:
    return (4,) if any(m in ("and", "or", "xor") for m in mods) else (3,)


def _mul_arity(mods: tuple) -> tuple:
    return (3,)


# Operand counts (destinations included) for opcodes whose form is fixed; the
# parser rejects other counts. Opcodes not listed are not checked.
ARITY: dict = {
    **{op: (3,) for op in ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl",
                           "shr", "min", "max", "mul24", "copysign", "addc", "subc")},
    **{op: (4,) for op in ("mad", "fma", "selp", "mad24", "madc", "sad", "slct", "bfe")},
    **{op: (2,) for op in ("mov", "not", "neg", "abs", "cnot", "popc", "clz", "brev",
                           "bfind", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2",
                           "tanh", "cvta")},
    **{op: (2, 3) for op in ("ld", "st", "ldu")},   # + optional cache-policy operand
    "cvt": (2, 3, 4),                                 # cvt.rn.f16x2.f32 d, a, b
    "sqrt": (2,), "rcp": (2,),
    "bfi": (5,), "prmt": (4,), "shf": (4,), "bra": (1,), "ret": (0,), "exit": (0,),
    "trap": (0,), "setp": _setp_arity, "set": _set_arity,
    "min": (3, 4), "max": (3, 4),   # three-input forms min.s32 d, a, b, c (sm_90)
    "add": (3,), "mul": _mul_arity,
    "szext": (3,), "bmsk": (3,), "fns": (4,), "dp4a": (4,), "dp2a": (4,), "testp": (2,),
    "lop3": (5, 6),                 # lop3.b32 d, a, b, c, lut; lop3.or.b32 d|p, a, b, c, lut, q
}
