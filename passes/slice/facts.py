"""Slicing criteria and the per-module facts the slice closure looks up.

``criterion`` says which instructions start the slice (see passes/slice/slice_pass.py
and docs/slice.md for why each one is needed); :class:`Facts` caches, per
function or instruction, what every universe (kernel + callees) asks again:
the seeds, the memory reads, the indexed writes, pointer regions, address-
taken parameters and the definitions of ``.reg`` return registers. A callee
shared by many kernels is therefore scanned once.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.passes.memory.checked import checked, checked_values
from ptxc.passes.memory.measured import access_kind, address_values

from ptxc.passes.memory.access import GENERIC, reads, writes
from ptxc.passes.slice.memory_deps import FunctionWrites
from ptxc.passes.memory.regions import Regions

CRITERIA = ("counters", "branches", "effects")
FAULTS = ("checked", "unchecked")
HOST_VISIBLE = ("global", GENERIC)     # spaces a write may reach host-visible memory through


def criterion(ins: ir.Instr, criteria: str) -> tuple[bool, bool]:
    """(keep the instruction, keep its guard's definition) for a seed.

    ``effects`` is ``counters`` plus every instruction that may write memory
    the host can observe (global or generic stores, atomics, reductions,
    copies to global, surface writes; calls are kept by every criterion),
    so a hybrid run also produces the full run's output buffers."""
    if ins.is_phi:
        return False, False
    info = ins.info
    if info is None:
        return True, True
    keep = info.terminator or info.barrier or ins.opcode in ("call", "mbarrier")
    if criteria == "effects" and not keep and info.writes_mem:
        keep = any(a.space in HOST_VISIBLE for a in writes(ins))
    guard = ins.guard is not None and (criteria != "branches" or keep or info.warp)
    return keep, guard


def seeds(fn, criteria: str, addresses: bool = False, faults: str = "unchecked") -> list:
    """What a function contributes as slicing criteria: kept instructions,
    and the guard values that must be known (a Value: its definition is kept
    by the data rule, so a guard returned by a call keeps the callee's
    definition of the return register too); with ``addresses``, also the
    address registers and guards of the memory instructions the memory
    counters measure; with ``faults=checked``, those of every access the
    executor checks (ptxc.passes.memory.checked, a superset)."""
    out = []
    for ins in fn.instructions():
        keep, guard = criterion(ins, criteria)
        if keep:
            out.append(ins)
        checks = faults == "checked" and checked(ins)
        measured = addresses and access_kind(ins) is not None
        needed = checked_values(ins) if checks else address_values(ins) if measured else []
        if ins.guard is not None and (guard or measured or checks):
            needed.append(ins.guard)
        out.extend(v for v in needed if isinstance(v, ir.Result))
    return out


class Facts:
    """Per-function and per-instruction facts, computed once per module (the
    indexed writes once per function and alias rules that matter to it)."""

    def __init__(self, program, address_size: int):
        self.program, self.address_size = program, address_size
        self._seeds: dict = {}
        self._reads: dict = {}
        self._writes: dict = {}
        self._regions: dict = {}
        self._reg_defs: dict = {}
        self._taken: dict = {}

    def seeds(self, fn, criteria: str, addresses: bool = False, faults: str = "unchecked") -> list:
        key = (id(fn), criteria, addresses, faults)
        if key not in self._seeds:
            self._seeds[key] = seeds(fn, criteria, addresses, faults)
        return self._seeds[key]

    def reads(self, ins) -> list:
        r = self._reads.get(id(ins))
        if r is None:
            r = self._reads[id(ins)] = reads(ins)
        return r

    def writes(self, fn, rules) -> FunctionWrites:
        key = (id(fn), rules.key(fn))
        w = self._writes.get(key)
        if w is None:
            w = self._writes[key] = FunctionWrites(fn, self.program, rules, self.regions)
        return w

    def taken_params(self, fn) -> tuple:
        """Indices of ``fn``'s parameters whose address is taken (``mov``/
        ``cvta`` of the parameter's symbol): such a parameter lives in .local
        memory and may be read by local or generic loads."""
        got = self._taken.get(id(fn))
        if got is None:
            names = {op.name for ins in fn.instructions() if ins.opcode in ("mov", "cvta")
                     for op in ins.srcs if isinstance(op, ir.Sym)}
            got = self._taken[id(fn)] = tuple(i for i, p in enumerate(fn.params)
                                              if p.name in names)
        return got

    def reg_defs(self, fn, names: frozenset) -> list:
        """Instructions of ``fn`` defining a register in ``names`` (or a
        vector component ``name.x``)."""
        key = (id(fn), names)
        if key not in self._reg_defs:
            self._reg_defs[key] = [ins for ins in fn.instructions()
                                   if any((r.reg or "").split(".")[0] in names
                                          for r in ins.results)]
        return self._reg_defs[key]

    def regions(self, fn) -> Regions:
        r = self._regions.get(id(fn))
        if r is None:
            r = self._regions[id(fn)] = Regions(fn, self.program, self.address_size)
        return r
