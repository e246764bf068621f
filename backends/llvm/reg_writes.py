"""Which instructions write registers, and which registers: the visit that
the value profiler (value_prof.py) instruments after every register write,
and the destinations whose bits error injection flips (inject_ir.py).

A register-writing instruction is any PTX instruction with an explicit
destination register operand (PTX ISA, "Instruction Operands": the
destination operands come first); its destinations, in operand order, are
the registers of ``d``, of ``{a, b, ...}`` vectors and of ``p|q`` pairs (a
``_`` sink writes nothing). Phis (SSA bookkeeping, no PTX instruction) and
calls (their return registers are written by the callee's ``st.param`` and
the caller's ``ld.param``, which are instructions of their own) are left
out, and so is the implicit carry flag of ``add.cc`` and friends (not a
register a program declares).
"""
from __future__ import annotations

from ptxc import ir

SKIP = ("phi", "call")


def destinations(ins: ir.Instr) -> list:
    """The destination registers of ``ins`` in operand order (Values)."""
    out = []
    for d in ins.dsts:
        items = [d.first, d.second] if isinstance(d, ir.Pair) else \
            list(d.items) if isinstance(d, (ir.Vec, ir.ParenList)) else [d]
        out.extend(x for x in items if isinstance(x, ir.Value) and not isinstance(x, ir.Sink))
    return out


def written(ins: ir.Instr) -> list[tuple[int, ir.Value]]:
    """[(destination index, register Value)] of a register-writing
    instruction; [] for any other (or a phi / call)."""
    if ins.is_phi or ins.opcode in SKIP:
        return []
    return list(enumerate(destinations(ins)))
