"""Which accesses a hybrid run bounds-checks without performing them.

A full run checks every memory access (docs/executor.md, "Memory"): an
out-of-bounds, null or misaligned address stops the launch with the kernel,
CTA, thread, PTX line and address. A hybrid run performs only the accesses
its slice keeps; with the slice option ``faults=checked`` (the default,
docs/slice.md) it also runs the *check* of every access listed here that the
slice does not keep, so that it stops where the full run stops, with the same
message. This module is the one place that lists those accesses, so that the
slice (which keeps their address computations and guards) and the executor
(backends/llvm/instruments/fault_check.py, which emits the checks) agree:

* ``ld``, ``ldu``, ``st``, ``atom``, ``red`` in every state space (global,
  shared, local, const, param, generic);
* ``cp.async`` (the non-bulk form; PTX ISA 9.7.9.25): its shared destination,
  its global source and its src-size / ignore-src operand.

Not checked when outside the slice (a hybrid run may run past such a bad
access that a full run reports; docs/slice.md says so): the bulk and tensor
copies, ``ldmatrix``/``stmatrix``, ``wmma.load``/``wmma.store``, texture
and surface instructions.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.passes.memory.measured import address_operand

CHECKED = ("ld", "ldu", "st", "atom", "red")
ASYNC_FORMS = ("commit_group", "wait_group", "wait_all", "bulk")


def checked(ins: ir.Instr) -> bool:
    """Does a hybrid run with ``faults=checked`` check ``ins`` when the
    slice does not keep it?"""
    if ins.opcode in CHECKED:
        return True
    return ins.opcode == "cp" and "async" in ins.mods and \
        not any(m in ins.mods for m in ASYNC_FORMS)


def checked_values(ins: ir.Instr) -> list:
    """The register values the check of ``ins`` reads (its addresses, the
    src-size operand of cp.async); its guard is added by the caller."""
    if not checked(ins):
        return []
    if ins.opcode == "cp":
        ops = list(ins.srcs[:2]) + [op for op in ins.srcs[3:4] if not isinstance(op, ir.Imm)]
    else:
        ops = [address_operand(ins)]
    out = []
    for op in ops:
        if op is not None:
            out.extend(ir.values_in(op))
    return out


def access_bytes(ins: ir.Instr) -> int:
    """Bytes per lane of a checked ld/ldu/st/atom/red (its natural alignment
    too): the element type's size times the vector width (1 for atomics)."""
    from ptxc.ir.types import TYPE_SIZES
    types = [m for m in ins.mods if m in TYPE_SIZES]
    size = TYPE_SIZES[types[-1]] if types else 4
    if ins.opcode in ("atom", "red"):
        return size
    width = next((int(m[1:]) for m in ins.mods if m in ("v2", "v4", "v8")), 1)
    return size * width
