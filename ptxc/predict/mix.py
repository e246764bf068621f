"""The instruction mix of a launch, from its exact counters (used by TopDown).

Warp-level executions per instruction class (ptxc.ir.opcodes.count_class:
the count pass's classes), computed from the per-basic-block warp
executions of the launch (``Profile.per_block``, exact in hybrid runs too)
times the instructions of each block. Phis are not instructions. The
execution-time model itself works on tasks and calculate periods
(:mod:`.periods`, :mod:`.inputs`).
"""
from __future__ import annotations

from .static_costs import ModuleCosts, instr_class

__all__ = ["instr_class", "instruction_mix"]


def instruction_mix(module, per_block: dict, static=None) -> dict:
    """{class: warp-level executions} over the launch's executed blocks
    (``static``: the module's static_costs.ModuleCosts, kept by a caller
    that predicts many launches)."""
    static = static or ModuleCosts(module, None, cost=lambda ins: 0.0)
    mix: dict = {}
    for rows, execs in static.executed(per_block):
        for ins in rows:
            mix[ins.cls] = mix.get(ins.cls, 0) + execs
    return mix
