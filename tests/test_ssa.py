"""SSA construction (Braun et al.) on PTX produced by nvcc: phis where two
writers meet (the HyPA case), guarded definitions reading the old value,
loops, and values read before written."""
from __future__ import annotations

from pathlib import Path

import ptxc
from ptxc import ir

CUDA = Path(__file__).parent / "cuda"


def load(name: str) -> ir.Module:
    return ptxc.load(str(CUDA / name))


def phis(fn: ir.Function) -> list[ir.Instr]:
    return [i for i in fn.instructions() if i.is_phi]


def defining(fn: ir.Function, opcode: str, reg: str) -> list[ir.Instr]:
    return [i for i in fn.instructions()
            if i.opcode == opcode and any(r.reg == reg for r in i.results)]


def test_register_written_on_both_arms_gets_a_phi():
    # tw_ifelse (-O0): v is %r11, written in both arms of `if (t & 4)`; the
    # later `if (v > 8)` reads it through a phi with one value per arm.
    fn = load("two_writers.sm90.O0.ptx").function("tw_ifelse")
    arm_a, arm_b = defining(fn, "mov", "%r11")
    (phi,) = [p for p in phis(fn) if p.results[0].reg == "%r11"]
    assert set(map(id, phi.srcs)) == {id(arm_a.results[0]), id(arm_b.results[0])}
    assert [b.name for b in phi.phi_blocks] == [arm_a.block.name, arm_b.block.name]
    use = [i for i in fn.instructions() if i.opcode == "mov" and i.srcs[0] is phi.results[0]]
    assert use, "the join reads the phi, not one of the arms (HyPA's bug)"


def test_loop_carried_values_get_header_phis():
    fn = load("two_writers.sm90.O0.ptx").function("tw_loop")
    header = [p for p in phis(fn) if p.results[0].reg in ("%r11", "%r12")]
    assert len(header) == 2
    for phi in header:
        entry_val, latch_val = phi.srcs
        assert entry_val.instr.block.name == "bb0"          # initial value before the loop
        assert latch_val.instr.block is phi.phi_blocks[1]    # redefined in the loop body


def test_guarded_definitions_read_the_old_value():
    # guarded.cu inline asm: `@p mov.b32 %r1, %r2;  @!p add.s32 %r1, %r2, 100;`
    m = load("guarded.sm90.ptx")
    movs = [i for f in m.functions for i in f.instructions()
            if i.opcode == "mov" and i.guard is not None and not i.guard_neg]
    adds = [i for f in m.functions for i in f.instructions()
            if i.opcode == "add" and i.guard_neg]
    assert movs and adds
    mov, add = movs[0], adds[0]
    assert add.prior == [mov.results[0]]        # the @!p add keeps what @p mov left
    assert mov.guard is add.guard
    assert len(mov.prior) == len(mov.results) == 1


def test_infinite_loop_at_entry_gets_entry_block_and_verifies():
    fn = load("loops.sm90.ptx").function("loop_forever")
    assert fn.blocks[-1].succs == [fn.blocks[-1]]        # the loop branches to itself
    from ptxc.passes.verifier import verify_function
    verify_function(fn)


def test_read_before_write_is_undef_with_one_warning():
    text = """.version 8.0
.target sm_90
.entry k()
{
  .reg .b32 %r<3>;
  add.s32 %r1, %r2, 1;
  add.s32 %r1, %r2, %r1;
  ret;
}"""
    m = ptxc.parse(text, "u.ptx")
    first, second = m.kernels[0].blocks[0].instrs[:2]
    assert isinstance(first.srcs[0], ir.Undef) and first.srcs[0] is second.srcs[0]
    assert len(m.warnings) == 1 and "%r2" in m.warnings[0] and m.warnings[0].startswith("u.ptx:6:")


def test_ssa_names_derive_from_registers():
    fn = load("two_writers.sm90.O0.ptx").function("tw_ifelse")
    names = [r.name for i in fn.instructions() for r in i.results if r.reg == "%r11"]
    assert names == ["%r11", "%r11.1", "%r11.2"]


def test_every_use_list_matches_operands():
    m = load("two_writers.sm90.ptx")
    for fn in m.functions:
        for ins in fn.instructions():
            for v in ins.operand_values():
                assert ins in v.uses
