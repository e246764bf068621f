"""Table 1's micro-benchmarks: two kernels that differ by one PTX instruction.

Luo & Suda 2011, section 3.1: "we design a set of micro benchmarks which
repeat instructions 10000 times. For each PTX instruction, two kernels are
designed in which there exists only one PTX instruction difference. By
calculating the difference of time between two kernels, we can get the time
cost for the PTX instruction." For every row of Table 1 (add ... not) and
every operand kind (int_const, int_reg, float_const, float_reg) this module
writes a *base* and a *test* kernel. Both run a loop of ``n`` iterations
(``n`` = 10000 at the launch, the paper's count) and read ``%clock64`` before
and after it; the loop body of the test kernel has one more instruction, the
measured one, so (test cycles - base cycles) / n is its time cost in GPU
clocks. One warp runs each kernel.

The measured instruction updates a loop-carried value x with a second operand
that is a register loaded from a parameter (``*_reg``) or an immediate
(``*_const``); neg and not have one operand, so their two kinds are the same
instruction. Both kernels also run an *anchor* on x each iteration, so that
the assembler can neither fold the loop into a closed form nor fuse the
measured instruction with a neighbour:

  integer kinds  ``shf.l.wrap.b32 x, x, x, i``  (x rotated left by the counter)
  float kinds    ``add.rn.f32 x, x, k``        (``.rn`` forbids contraction into an FMA)

and the float arithmetic is ``.rn`` too (``div.rn.f32``: what nvcc emits for
``/``). Bitwise rows of the float kinds apply ``and.b32`` ... to the ``.f32``
registers (PTX allows any 32-bit register for a ``.b32`` instruction).
``.pragma "nounroll"`` keeps the loop as written. Each thread stores
``out[2 tid]`` = cycles and ``out[2 tid + 1]`` = the final x (its 32 bits).

The ld/st row is timed by the same method with a dependent global load: the
test kernel's loop adds ``ld.global.u64 x, [chain + x]`` (x: a byte offset;
``chain`` holds a random cycle of offsets over a buffer larger than every
cache), so the difference per iteration is the latency of one memory access,
t_mem of eq. (1).
"""
from __future__ import annotations

from ptxc.gpus.luo_suda_params import KINDS, ROWS

from .kernel import Kernel, entry

REPEAT = 10000                      # section 3.1
UNARY = ("neg", "not")
BITWISE = ("and", "or", "xor", "not")

# The immediate of each *_const instruction.
INT_CONST = {"add": "7", "sub": "7", "mul": "7", "div": "7", "min": "1000", "max": "-1000",
             "and": "0x7FFFFFF0", "or": "0x00000003", "xor": "0x00000005"}
FLOAT_CONST = {"add": "0f3F000000", "sub": "0f3F000000",     # 0.5
               "mul": "0f3F800347",                        # 1.0001
               "div": "0f3F8CCCCD",                        # 1.1
               "min": "0f42C80000", "max": "0fC2C80000",   # 100, -100
               "and": "0xFFFFFFF0", "or": "0x00000003", "xor": "0x00000005"}
INT_OP = {"add": "add.s32", "sub": "sub.s32", "mul": "mul.lo.s32", "div": "div.s32",
          "neg": "neg.s32", "min": "min.s32", "max": "max.s32", "and": "and.b32",
          "or": "or.b32", "xor": "xor.b32", "not": "not.b32"}
FLOAT_OP = {"add": "add.rn.f32", "sub": "sub.rn.f32", "mul": "mul.rn.f32",
            "div": "div.rn.f32", "neg": "neg.f32", "min": "min.f32", "max": "max.f32",
            "and": "and.b32", "or": "or.b32", "xor": "xor.b32", "not": "not.b32"}
INT_ANCHOR = "shf.l.wrap.b32 %r1, %r1, %r1, %r4;"
FLOAT_ANCHOR = "add.rn.f32 %f1, %f1, %f3;"

REGS = ("    .reg .pred %p<2>;\n    .reg .b32 %r<8>;\n    .reg .f32 %f<4>;\n"
        "    .reg .b64 %rd<12>;")


def measured(row: str, kind: str) -> str:
    """The one instruction the test kernel of (row, kind) adds."""
    floating = kind.startswith("float")
    op = (FLOAT_OP if floating else INT_OP)[row]
    x = "%f1" if floating else "%r1"
    if row in UNARY:
        return f"{op} {x}, {x};"
    other = ((FLOAT_CONST if floating else INT_CONST)[row] if kind.endswith("const")
             else ("%f2" if floating else "%r2"))
    return f"{op} {x}, {x}, {other};"


def params_of(kind: str) -> tuple:
    if kind.startswith("float"):
        return (("out", ".u64"), ("n", ".u32"), ("x0", ".f32"), ("y", ".f32"), ("k", ".f32"))
    return (("out", ".u64"), ("n", ".u32"), ("x0", ".s32"), ("y", ".s32"))


def _loop(setup: list, chain: list, result: str) -> list:
    """The body shared by every Table 1 kernel: setup, the timed loop of
    ``chain`` instructions, the stores of cycles and ``result`` (a 64-bit register)."""
    return [
        "ld.param.u64 %rd1, [out];",
        "ld.param.u32 %r3, [n];",
        *setup,
        "mov.u32 %r4, 0;",
        "mov.u64 %rd2, %clock64;",
        "$L_rep:",
        '.pragma "nounroll";',
        *chain,
        "add.u32 %r4, %r4, 1;",
        "setp.lt.u32 %p1, %r4, %r3;",
        "@%p1 bra $L_rep;",
        "mov.u64 %rd3, %clock64;",
        "sub.s64 %rd4, %rd3, %rd2;",
        "mov.u32 %r5, %tid.x;",
        "mul.wide.u32 %rd5, %r5, 16;",
        "cvta.to.global.u64 %rd6, %rd1;",
        "add.s64 %rd7, %rd6, %rd5;",
        "st.global.u64 [%rd7], %rd4;",
        f"st.global.u64 [%rd7+8], {result};",
        "ret;",
    ]


def pair(row: str, kind: str) -> tuple:
    """(base, test) kernels of Table 1's ``row`` with operands of ``kind``."""
    floating = kind.startswith("float")
    if floating:
        setup = ["ld.param.f32 %f1, [x0];", "ld.param.f32 %f2, [y];", "ld.param.f32 %f3, [k];"]
        anchor, tail = FLOAT_ANCHOR, ["mov.b32 %r6, %f1;"]
    else:
        setup = ["ld.param.s32 %r1, [x0];", "ld.param.s32 %r2, [y];"]
        anchor, tail = INT_ANCHOR, ["mov.b32 %r6, %r1;"]
    out = []
    for variant, chain in (("base", [anchor]), ("test", [anchor, measured(row, kind)])):
        name = f"t1_{row}_{kind}_{variant}"
        body = _loop(setup, chain, "%rd8")
        body[-3:-3] = tail + ["cvt.u64.u32 %rd8, %r6;"]
        out.append(Kernel(name, entry(name, params_of(kind), REGS, body), params_of(kind),
                          {"row": row, "kind": kind, "variant": variant,
                           "instruction": measured(row, kind)}))
    return tuple(out)


LD_PARAMS = (("out", ".u64"), ("n", ".u32"), ("chain", ".u64"), ("x0", ".u64"))
LD_INSTRUCTION = "ld.global.u64 %rd10, [%rd11];"


def ld_pair() -> tuple:
    """(base, test) kernels of the ld/st row: the test adds one dependent load."""
    setup = ["ld.param.u64 %rd9, [chain];", "cvta.to.global.u64 %rd9, %rd9;",
             "ld.param.u64 %rd10, [x0];"]
    out = []
    for variant, chain in (("base", ["add.s64 %rd11, %rd9, %rd10;"]),
                           ("test", ["add.s64 %rd11, %rd9, %rd10;", LD_INSTRUCTION])):
        name = f"t1_ld_st_{variant}"
        out.append(Kernel(name, entry(name, LD_PARAMS, REGS, _loop(setup, chain, "%rd10")),
                          LD_PARAMS, {"row": "ld_st", "kind": None, "variant": variant,
                                      "instruction": LD_INSTRUCTION}))
    return tuple(out)


def all_pairs() -> list:
    """Every (base, test) pair: Table 1's rows x kinds, then the ld/st row."""
    return [pair(row, kind) for row in ROWS for kind in KINDS] + [ld_pair()]
