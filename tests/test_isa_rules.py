"""The PTX ISA rules ptxc refuses before anything runs (issue 27), as a table:
each rule with a rejected and an accepted example. ptxc refuses the first
with the message given here, verbatim and located, and accepts the second;
where ptxas is installed, ptxas agrees on both (a row marked ``ptxc limit``
is a limit of ptxc, not of the ISA: ptxas accepts both).

The rules live in ptxc/ir/isa_rules.py (instruction types, operand types and
forms), ptxc/ir/opcodes.py (operand counts), ptxc/frontend/decl_rules.py
(register ranges, initializers, sizes) and ptxc/frontend/debug_directives.py
(.loc, .file, .section). Each example is one line of a kernel body, or of
the module before the kernel (rows whose example starts with a directive
other than .reg/.loc/.shared/.local).
"""
from __future__ import annotations

import os
import subprocess
import tempfile

import pytest

import ptxc
from ptxc import PtxcError
from ptxc.ir import isa_rules
from ptxc.passes.verifier import verify_module

from corpus import PTXAS

HEAD = ".version 8.7\n.target sm_90a\n.address_size 64\n"
REGS = ("\t.reg .pred %p<4>;\n\t.reg .b16 %rs<4>;\n\t.reg .b32 %r<4>;\n\t.reg .u32 %u<4>;\n"
        "\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .f64 %fd<4>;\n")
MODULE_LINE = 4          # a module-level example is on this line
BODY_LINE = 14           # a body example is on this line


def ptx(example: str) -> str:
    """A module with ``example`` at MODULE_LINE (a module directive) or BODY_LINE."""
    module_level = example.startswith((".global", ".const", ".file", ".section"))
    decls = example + "\n" if module_level else "\n"
    body = "" if module_level else example + "\n"
    return (HEAD + decls + ".visible .entry k(.param .u64 p)\n{\n" + REGS + body
            + "\tld.param.u64 %rd1, [p];\n\tret;\n}\n")


# (rule, rejected example, column, message, accepted example, who refuses it)
RULES = [
    # --- instruction types (PTX ISA 9.7: each instruction's .type list)
    ('and: bit types only', '\tand.f32 %f1, %f2, %f3;', 2,
     "'and.f32': and takes .pred, .b16, .b32, .b64, not .f32 (PTX ISA: and)",
     '\tand.b32 %r1, %r2, %r3;', 'ISA'),
    ('mul.wide: 16 and 32 bits', '\tmul.wide.s64 %rd1, %rd2, %rd3;', 2,
     "'mul.wide.s64': mul.wide takes .s16, .u16, .s32, .u32, not .s64 (PTX ISA: mul)",
     '\tmul.wide.s32 %rd1, %r2, %r3;', 'ISA'),
    ('mul: an integer needs .lo/.hi/.wide', '\tmul.s32 %r1, %r2, %r3;', 2,
     "'mul.s32': mul without .wide, .lo or .hi takes .f16, .bf16, .f32, .f64, .f16x2, "
     ".bf16x2, .f32x2, not .s32 (PTX ISA: mul)",
     '\tmul.lo.s32 %r1, %r2, %r3;', 'ISA'),
    ('mad.wide: 16 and 32 bits', '\tmad.wide.u64 %rd1, %rd2, %rd3, %rd1;', 2,
     "'mad.wide.u64': mad.wide takes .s16, .u16, .s32, .u32, not .u64 (PTX ISA: mad)",
     '\tmad.wide.u32 %rd1, %r2, %r3, %rd1;', 'ISA'),
    ('add: no untyped bits', '\tadd.b32 %r1, %r2, %r3;', 2,
     "'add.b32': add without .cc takes .s16, .u16, .s32, .u32, .s64, .u64, .f16, .bf16, "
     ".f32, .f64, .f16x2, .bf16x2, .f32x2, .s16x2, .u16x2, not .b32 (PTX ISA: add)",
     '\tadd.s32 %r1, %r2, %r3;', 'ISA'),
    ('add.cc: 32 and 64 bits', '\tadd.cc.s16 %rs1, %rs2, %rs3;', 2,
     "'add.cc.s16': add.cc takes .s32, .u32, .s64, .u64, not .s16 (PTX ISA: add)",
     '\tadd.cc.u32 %r1, %r2, %r3;', 'ISA'),
    ('abs: signed only', '\tabs.u32 %r1, %r2;', 2,
     "'abs.u32': abs takes .s16, .s32, .s64, .f16, .bf16, .f32, .f64, .f16x2, .bf16x2, "
     "not .u32 (PTX ISA: abs)",
     '\tabs.s32 %r1, %r2;', 'ISA'),
    ('sin: .f32 only', '\tsin.approx.f64 %fd1, %fd2;', 2,
     "'sin.approx.f64': sin takes .f32, not .f64 (PTX ISA: sin)",
     '\tsin.approx.f32 %f1, %f2;', 'ISA'),
    ('shl: bit types only', '\tshl.s32 %r1, %r2, 3;', 2,
     "'shl.s32': shl takes .b16, .b32, .b64, not .s32 (PTX ISA: shl)",
     '\tshl.b32 %r1, %r2, 3;', 'ISA'),
    ('prmt: .b32 only', '\tprmt.b64 %rd1, %rd2, %rd3, %rd1;', 2,
     "'prmt.b64': prmt takes .b32, not .b64 (PTX ISA: prmt)",
     '\tprmt.b32 %r1, %r2, %r3, %r1;', 'ISA'),
    ('popc: .b32 and .b64', '\tpopc.u32 %r1, %r2;', 2,
     "'popc.u32': popc takes .b32, .b64, not .u32 (PTX ISA: popc)",
     '\tpopc.b32 %r1, %r2;', 'ISA'),
    ('bfe: integers', '\tbfe.b32 %r1, %r2, 0, 8;', 2,
     "'bfe.b32': bfe takes .s32, .u32, .s64, .u64, not .b32 (PTX ISA: bfe)",
     '\tbfe.u32 %r1, %r2, 0, 8;', 'ISA'),
    ('selp: no .pred', '\tselp.pred %p1, %p2, %p3, %p1;', 2,
     "'selp.pred': selp takes .b16, .b32, .b64, .s16, .u16, .s32, .u32, .s64, .u64, .f32, "
     ".f64, not .pred (PTX ISA: selp)",
     '\tselp.b32 %r1, %r2, %r3, %p1;', 'ISA'),
    ('mov: no .f16', '\tmov.f16 %rs1, %rs2;', 2,
     "'mov.f16': mov takes .pred, .b16, .b32, .b64, .b128, .s16, .u16, .s32, .u32, .s64, "
     ".u64, .f32, .f64, not .f16 (PTX ISA: mov)",
     '\tmov.b16 %rs1, %rs2;', 'ISA'),
    ('cvta: .u32 and .u64', '\tcvta.to.global.u16 %rs1, %rs2;', 2,
     "'cvta.to.global.u16': cvta takes .u32, .u64, not .u16 (PTX ISA: cvta)",
     '\tcvta.to.global.u64 %rd1, %rd2;', 'ISA'),
    ('cvt: numeric types', '\tcvt.b32.f32 %r1, %f1;', 2,
     "'cvt.b32.f32': cvt converts between numeric types, not .b32 (PTX ISA: cvt)",
     '\tcvt.rzi.s32.f32 %r1, %f1;', 'ISA'),
    ('ld: no .pred', '\tld.global.pred %p1, [%rd1];', 2,
     "'ld.global.pred': ld takes .b8, .b16, .b32, .b64, .b128, .s8, .u8, .s16, .u16, "
     ".s32, .u32, .s64, .u64, .f32, .f64, not .pred (PTX ISA: ld)",
     '\tld.global.b32 %r1, [%rd1];', 'ISA'),
    ('one type', '\tadd.s32.u32 %r1, %r2, %r3;', 2,
     "'add.s32.u32': add without .cc takes one type, got 2 (PTX ISA: add)",
     '\tadd.u32 %r1, %r2, %r3;', 'ISA'),
    ('a type at all', '\tadd %r1, %r2, %r3;', 2,
     "'add': add without .cc needs a type (.s16, .u16, .s32, .u32, .s64, .u64, .f16, "
     ".bf16, .f32, .f64, .f16x2, .bf16x2, .f32x2, .s16x2, .u16x2) (PTX ISA: add)",
     '\tadd.s32 %r1, %r2, %r3;', 'ISA'),
    # --- operand counts (PTX ISA 9.7: each instruction's syntax)
    ('szext: three operands', '\tszext.wrap.u32 %r1, %r2;', 2,
     "'szext.wrap.u32' takes 3 operands, got 2",
     '\tszext.wrap.u32 %r1, %r2, 8;', 'ISA'),
    ('prmt: four operands', '\tprmt.b32 %r1, %r2, %r3;', 2,
     "'prmt.b32' takes 4 operands, got 3",
     '\tprmt.b32 %r1, %r2, %r3, 0x3210;', 'ISA'),
    # --- operand types (PTX ISA 9.4, Type Checking Rules)
    ('register size', '\tprmt.b32 %r1, %r2, %rd1, %r3;', 21,
     "'prmt.b32': operand 3 (%rd1) is .b64; it must be a 32-bit register (PTX ISA 9.4, "
     "Type Checking Rules)",
     '\tprmt.b32 %r1, %r2, %r3, %r3;', 'ISA'),
    ('integer operand, float register', '\tadd.s32 %r1, %f1, %r2;', 15,
     "'add.s32': operand 2 (%f1) is .f32; it must be a .b32, .s32 or .u32 register (PTX "
     "ISA 9.4, Type Checking Rules)",
     '\tadd.s32 %r1, %u1, %r2;', 'ISA'),
    ('float operand, integer register', '\tadd.f32 %f1, %u1, %f2;', 15,
     "'add.f32': operand 2 (%u1) is .u32; it must be a .b32 or .f32 register (PTX ISA "
     "9.4, Type Checking Rules)",
     '\tadd.f32 %f1, %r1, %f2;', 'ISA'),
    ('mul.wide writes twice the width', '\tmul.wide.s32 %r1, %r2, %r3;', 15,
     "'mul.wide.s32': operand 1 (%r1) is .b32; it must be a .b64, .s64 or .u64 register "
     "(PTX ISA 9.4, Type Checking Rules)",
     '\tmul.wide.s32 %rd1, %r2, %r3;', 'ISA'),
    ('setp writes a predicate', '\tsetp.eq.s32 %r1, %r2, %r3;', 14,
     "'setp.eq.s32': operand 1 (%r1) is .b32; it must be a .pred register (PTX ISA 9.4, "
     "Type Checking Rules)",
     '\tsetp.eq.s32 %p1, %r2, %r3;', 'ISA'),
    ('selp selects on a predicate', '\tselp.b32 %r1, %r2, %r3, %r0;', 26,
     "'selp.b32': operand 4 (%r0) is .b32; it must be a .pred register (PTX ISA 9.4, Type "
     "Checking Rules)",
     '\tselp.b32 %r1, %r2, %r3, %p0;', 'ISA'),
    ('shift amount is 32 bits', '\tshl.b32 %r1, %r2, %rd1;', 20,
     "'shl.b32': operand 3 (%rd1) is .b64; it must be a .b32, .s32 or .u32 register (PTX "
     "ISA 9.4, Type Checking Rules)",
     '\tshl.b32 %r1, %r2, %r3;', 'ISA'),
    ("a guard is a predicate", "\t@%r1 add.s32 %r1, %r2, %r3;", 3,
     "guard %r1 is .b32; a guard is a .pred register (PTX ISA 9.3, predicated execution)",
     "\t@%p1 add.s32 %r1, %r2, %r3;", "ISA"),
    # --- operand forms (PTX ISA 9.7: each instruction's syntax)
    ('mov reads no address', '\tmov.u64 %rd1, [%rd2];', 17,
     "'mov.u64': operand 2 ([%rd2]) cannot be a memory address (PTX ISA: mov)",
     '\tmov.u64 %rd1, %rd2;', 'ISA'),
    ('add reads no variable', '\tadd.u64 %rd1, p, 8;', 16,
     "'add.u64': operand 2 (p) must be a register or a constant, not a variable name (PTX "
     "ISA: add)",
     '\tadd.u64 %rd1, %rd2, 8;', 'ISA'),
    ('add writes no sink', '\tadd.s32 _, %r1, %r2;', 10,
     "'add.s32': operand 1 (_) cannot be the sink '_' (PTX ISA: add)",
     '\tsetp.eq.s32 _|%p1, %r1, %r2;', 'ISA'),
    # --- declarations (PTX ISA 5.4)
    ('register range count', '\t.reg .b32 %q<-1>;', 12,
     "register range %q<-1>: the count must be 0 to 4294967295 (PTX ISA: parameterized "
     "variable names)",
     '\t.reg .b32 %q<1>;', 'ISA'),
    ('array initializer count', '.global .u32 g[2] = {1, 2, 3};', 14,
     "variable 'g': 3 initializers for 2 elements (PTX ISA 5.4.4, initializers)",
     '.global .u32 g[2] = {1, 2};', 'ISA'),
    ('nested initializer count', '.global .u32 g[2][2] = {{1, 2, 3}, {3, 4}};', 14,
     "variable 'g': 3 initializers for 2 elements (PTX ISA 5.4.4, initializers)",
     '.global .u32 g[2][2] = {{1, 2}, {3}};', 'ISA'),
    ('vector initializer count', '.global .v2 .u32 v = {1, 2, 3};', 18,
     "variable 'v': a .v2 element takes 2 values in braces, got 3 (PTX ISA 5.4.4, "
     "initializers)",
     '.global .v2 .u32 v = {1, 2};', 'ISA'),
    ('float initialized by an integer', '.global .f32 x = 1;', 14,
     "variable 'x': the integer 1 cannot initialise a .f32 value (write a float literal) "
     "(PTX ISA 5.4.4, initializers)",
     '.global .f32 x = 1.0;', 'ISA'),
    ('integer initialized by a float', '.global .u32 x = 1.5;', 14,
     "variable 'x': the float 1.5 cannot initialise a .u32 value (PTX ISA 5.4.4, "
     "initializers)",
     '.global .b32 x = 1.5;', 'ISA'),
    ('scalar initialized by a list', '.global .u32 x = {1};', 14,
     "variable 'x': a scalar is initialised with a value, not a brace list (PTX ISA "
     "5.4.4, initializers)",
     '.global .u32 x = 1;', 'ISA'),
    ('no initializer in .shared', '\t.shared .u32 s[2] = {1, 2};', 15,
     "variable 's': a .shared variable cannot have an initializer (PTX ISA 5.4.4: only "
     ".global and .const)",
     '\t.shared .u32 s[2];', 'ISA'),
    ('64 KiB of .const', '.const .b8 c[65537];', 12,
     "variable 'c' (65537 bytes) brings the module's .const variables to 65537 bytes; "
     "ptxc holds at most 64 KiB per module (ptxas' limit)",
     '.const .b8 c[65536];', 'ISA'),
    ('4 GiB of .global', '.global .u32 g[17179869184];', 14,
     "variable 'g' (68719476736 bytes) brings the module's .global variables to "
     "68719476736 bytes; ptxc holds at most 4 GiB per module (one segment of its memory)",
     '.global .u32 g[1024];', 'ptxc limit'),
    ('512 KiB of .local', '\t.local .b8 l[524289];', 13,
     "variable 'l' (524289 bytes) brings the function's .local variables to 524289 bytes; "
     "ptxc holds at most 512 KiB per thread (CUDA's limit)",
     '\t.local .b8 l[524288];', 'ptxc limit'),
    # --- debugging directives (PTX ISA 11.5)
    ('.loc numbers fit 32 bits', '\t.loc 1234567890123456789012345678901234567890 1 1', 7,
     ".loc file index '1234567890123456789012345678901234567890' does not fit in 32 bits "
     "(PTX ISA 11.5: .loc)",
     '\t.loc 1 1 1', 'ISA'),
    ('.loc takes three numbers', '\t.loc 1 2', 2,
     "malformed .loc directive: '.loc 1 2' (PTX ISA 11.5: .loc file line column[, "
     "function_name label, inlined_at file line column])",
     '\t.loc 1 2 3', 'ISA'),
    ('.file index fits 32 bits', '.file 4294967296 "a.cu"', 7,
     ".file index '4294967296' does not fit in 32 bits (PTX ISA 11.5: .file)",
     '.file 4294967295 "a.cu"', 'ISA'),
    ('.section holds data', '.section .debug_str { hello garbage ( }', 23,
     "malformed .section data: unexpected 'hello' (PTX ISA 11.5: labels and "
     ".b8/.b16/.b32/.b64 lists of integers or labels)",
     '.section .debug_str { l: .b8 104, 0 }', 'ISA'),
    ('.section bytes fit .b8', '.section .debug_str { l: .b8 104, 256, 0 }', 35,
     "malformed .section data: value '256' does not fit .b8 (PTX ISA 11.5: labels and "
     ".b8/.b16/.b32/.b64 lists of integers or labels)",
     '.section .debug_str { l: .b8 104, 255, 0 }', 'ISA'),
]
IDS = [r[0] for r in RULES]


def line_of(example: str) -> int:
    module_level = example.startswith((".global", ".const", ".file", ".section"))
    return MODULE_LINE if module_level else BODY_LINE


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_rejected_with_located_message(rule):
    _, bad, col, message, _, _ = rule
    with pytest.raises(PtxcError) as info:
        ptxc.parse(ptx(bad), "t.ptx")
    assert info.value.headline() == f"t.ptx:{line_of(bad)}:{col}: error: {message}"
    rendered = info.value.render().split("\n")
    assert len(rendered) == 3 and rendered[2].index("^") == col - 1


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_accepted_and_verified(rule):
    module = ptxc.parse(ptx(rule[4]), "t.ptx")
    verify_module(module)


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed (the table is checked against it where it is)")
@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_ptxas_agrees(rule):
    _, bad, _, _, good, who = rule
    assert ptxas_ok(ptx(good)), f"ptxas rejects the accepted example {good!r}"
    if who == "ISA":
        assert not ptxas_ok(ptx(bad)), f"ptxas accepts the rejected example {bad!r}"


def ptxas_ok(text: str) -> bool:
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run([PTXAS, "-arch=sm_90a", f.name, "-o", os.devnull],
                           capture_output=True, text=True, timeout=60)
        return r.returncode == 0
    finally:
        os.unlink(f.name)


def test_verifier_rechecks_what_a_pass_made():
    """An instruction a pass rewrote into a form the ISA forbids is refused
    by the verifier (the parser never saw it)."""
    module = ptxc.parse(ptx("\tand.b32 %r1, %r2, %r3;"), "t.ptx")
    ins = next(i for i in module.function("k").instructions() if i.opcode == "and")
    ins.mods = ("f32",)
    with pytest.raises(PtxcError) as info:
        verify_module(module)
    assert info.value.headline() == (
        f"t.ptx:{BODY_LINE}:2: error: verifier: @k, block bb0, line {BODY_LINE}: "
        "'and.f32': and takes .pred, .b16, .b32, .b64, not .f32 (PTX ISA: and)")


def test_vector_range_registers_are_not_type_checked():
    """`.reg .v2 .b16 x<2>` registers are typed as their element by ptxc;
    used whole as 32 bits (ZLUDA's ldmatrix test, which ptxas accepts) they
    are not refused."""
    text = ptx("\t.reg .v2 .b16 x<2>;\n\tmov.b32 x0, %r1;")
    verify_module(ptxc.parse(text, "t.ptx"))


@pytest.mark.parametrize("want,have,ok", [
    ("b32", "f32", True), ("s32", "u32", True), ("s32", "f32", False), ("f32", "b32", True),
    ("f32", "u32", False), ("f64", "f32", False), ("pred", "b32", False), ("b32", "pred", False),
    ("f16x2", "f16x2", True), ("bf16x2", "f16x2", False), ("s32", "f16x2", True),
    ("f32", "f16x2", False), ("bf16", "b16", True), ("f16", "u16", False),
])
def test_type_checking_rules(want, have, ok):
    """PTX ISA 9.4's table, as ptxas 13.0 applies it (probed one by one)."""
    assert isa_rules.compatible(want, have) is ok
