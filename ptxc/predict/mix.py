"""The instruction mix of a launch, from its exact counters (used by TopDown).

Warp-level executions per instruction class (ptxc.ir.opcodes.count_class:
the count pass's classes), computed from the per-basic-block warp
executions of the launch (``Profile.per_block``, exact in hybrid runs too)
times the instructions of each block. Phis are not instructions. The
execution-time model itself works on tasks and calculate periods
(:mod:`.periods`, :mod:`.inputs`).
"""
from __future__ import annotations

from ..errors import PtxcError
from ptxc.ir.opcodes import count_class


def instr_class(ins) -> str:
    """The count pass's class of one instruction (ptxc.ir.opcodes.count_class)."""
    return count_class(ins.info, ins.mods)


def block_table(module) -> dict:
    """{"function:block": Block} of every function of ``module``."""
    return {f"{fn.name}:{b.name}": b for fn in module.functions for b in fn.blocks}


def executed_blocks(module, per_block: dict):
    """(Block, warp executions) of every block the launch executed; a block
    the module does not have is an error, never a silently smaller count."""
    blocks = block_table(module)
    for key, row in per_block.items():
        if not row["warp_execs"]:
            continue
        if key not in blocks:
            raise PtxcError(f"the launch profile names block '{key}', which the module "
                            "does not have (was the module transformed after the launch?)")
        yield blocks[key], row["warp_execs"]


def instruction_mix(module, per_block: dict) -> dict:
    """{class: warp-level executions} over the launch's executed blocks."""
    mix: dict = {}
    for block, execs in executed_blocks(module, per_block):
        for ins in block.instrs:
            if not ins.is_phi:
                c = instr_class(ins)
                mix[c] = mix.get(c, 0) + execs
    return mix
