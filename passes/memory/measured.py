"""Which instructions the memory counters measure, and where their address is.

docs/metrics.md ("Memory access counters") defines the counters; this module
is the one place that says which PTX instructions they cover, so that the
slice (``slice{addresses=true}`` keeps their address computations) and the
executor (which counts them) agree:

* ``ld``, ``ldu`` (loads), ``st`` (stores), ``atom`` (atomics) and ``red``
  (reductions)
* whose state space is ``.global``, ``.shared`` (any ``::cta``/``::cluster``
  qualifier) or generic (no space: the space is the one the address resolves
  to at run time).

``.local``, ``.const`` and ``.param`` accesses, ``cp.async``, texture and
tensor-core memory instructions are not measured.
"""
from __future__ import annotations

from ptxc import ir

KINDS = {"ld": "load", "ldu": "load", "st": "store", "atom": "atomic", "red": "reduction"}
MEASURED_SPACES = ("global", "shared", "generic")
STATE_SPACES = ("global", "shared", "local", "const", "param")


def state_space(ins: ir.Instr) -> str:
    """The instruction's state-space modifier ('generic' when it has none)."""
    for m in ins.mods:
        base = m.split("::")[0]
        if base in STATE_SPACES:
            return base
    return "generic"


def access_kind(ins: ir.Instr) -> str | None:
    """'load', 'store', 'atomic' or 'reduction' for a measured instruction, else None."""
    kind = KINDS.get(ins.opcode)
    if kind is None or state_space(ins) not in MEASURED_SPACES:
        return None
    return kind


def address_operand(ins: ir.Instr):
    """The ``[address]`` operand of a load, store, atomic or reduction."""
    if ins.opcode == "st" and ins.dsts and isinstance(ins.dsts[0], ir.Addr):
        return ins.dsts[0]
    return ins.srcs[0] if ins.srcs else None


def address_values(ins: ir.Instr) -> list:
    """The register values a measured instruction's lane addresses depend on."""
    if access_kind(ins) is None:
        return []
    op = address_operand(ins)
    return list(ir.values_in(op)) if op is not None else []
