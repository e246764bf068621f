"""Slicing criteria and the per-module facts the slice closure looks up.

``criterion`` says which instructions start the slice (see passes/slice.py
and docs/slice.md for why each one is needed); :class:`Facts` caches, per
function or instruction, what every universe (kernel + callees) asks again:
the seeds, the memory reads, the indexed writes, pointer regions, address-
taken parameters and the definitions of ``.reg`` return registers. A callee
shared by many kernels is therefore scanned once.
"""
from __future__ import annotations

from ptxc import ir

from .slice_access import reads
from .slice_memory import FunctionWrites
from .slice_regions import Regions

CRITERIA = ("counters", "branches")


def criterion(ins: ir.Instr, criteria: str) -> tuple[bool, bool]:
    """(keep the instruction, keep its guard's definition) for a seed."""
    if ins.is_phi:
        return False, False
    info = ins.info
    if info is None:
        return True, True
    keep = info.terminator or info.barrier or ins.opcode == "call"
    guard = ins.guard is not None and (criteria == "counters" or keep or info.warp)
    return keep, guard


def seeds(fn, criteria: str) -> list:
    """What a function contributes as slicing criteria: kept instructions,
    and the guard values that must be known (a Value: its definition is kept
    by the data rule, so a guard returned by a call keeps the callee's
    definition of the return register too)."""
    out = []
    for ins in fn.instructions():
        keep, guard = criterion(ins, criteria)
        if keep:
            out.append(ins)
        if guard and isinstance(ins.guard, ir.Result):
            out.append(ins.guard)
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

    def seeds(self, fn, criteria: str) -> list:
        key = (id(fn), criteria)
        if key not in self._seeds:
            self._seeds[key] = seeds(fn, criteria)
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
