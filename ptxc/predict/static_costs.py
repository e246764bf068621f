"""The static half of a launch's prediction, computed once per module and
parameter set and shared by every launch of a run (docs/predict.md).

A prediction (ptxc.predict.analyse) needs, per instruction of each
executed block, its Table 1 cost (costs.instruction_cost), whether it is a
memory access (costs.is_memory_access), its D_mem (costs.access_bytes), its
key in ``Profile.per_memory_instr`` and its count class (instr_class);
per function the costs summed over the PTX text; per kernel the static
shared memory (the executor's layout, which builds a backend Plan). None of
these depend on the launch: an application that launches a kernel 255
times (nw of tests/apps) spent most of its prediction time recomputing
them, 2.4 ms per launch. :class:`ModuleCosts` computes each once, on first
use; the launch's counters are combined with them per launch.
"""
from __future__ import annotations

from typing import NamedTuple

from ptxc.errors import PtxcError

from ptxc.ir.opcodes import count_class

from .costs import access_bytes, instruction_cost, is_memory_access


def instr_class(ins) -> str:
    """The count pass's class of one instruction (ptxc.ir.opcodes.count_class)."""
    return count_class(ins.info, ins.mods)


class InstrRow(NamedTuple):
    """What the model needs of one (non-phi) instruction."""
    cost: float          # Table 1 cost (cost.ld_st for a memory access)
    memory: bool         # part of a memory access task (section 3.2)
    bytes: int           # D_mem of eq. (1); 0 for a computation instruction
    mem_key: str         # "function:n", its key in Profile.per_memory_instr
    cls: str             # the count pass's class (TopDown's mix)


class ModuleCosts:
    """Per-instruction rows, per-function static costs and per-kernel static
    shared memory of ``module`` under the ModelParams ``params``; ``cost``
    and ``is_memory`` (one instruction -> its cost / whether it is a memory
    access) replace Table 1's costs.instruction_cost and
    costs.is_memory_access (tests, and models of other costs)."""

    def __init__(self, module, params, cost=None, is_memory=None):
        self.module, self.params = module, params
        self._cost = cost or (lambda ins: instruction_cost(ins, params))
        self._is_memory = is_memory or is_memory_access
        self._blocks = {f"{f.name}:{b.name}": (f, b) for f in module.functions for b in f.blocks}
        self._rows: dict = {}
        self._static: dict = {}
        self._shared: dict = {}

    def executed(self, per_block: dict):
        """(rows, warp executions) of every block a launch executed
        (``Profile.per_block``); a block the module does not have is an
        error, never a silently smaller count."""
        for key, row in per_block.items():
            if not row["warp_execs"]:
                continue
            if key not in self._blocks:
                raise PtxcError(f"the launch profile names block '{key}', which the module "
                                "does not have (was the module transformed after the launch?)")
            yield self.rows(key), row["warp_execs"]

    def rows(self, key: str) -> list:
        """[InstrRow] of block ``key``'s instructions, in order."""
        if key not in self._rows:
            self._function_rows(self._blocks[key][0])
        return self._rows[key]

    def static_costs(self, f) -> tuple:
        """(computation, memory) cost summed over function ``f``'s PTX text."""
        if f.name not in self._static:
            comp = mem = 0.0
            for b in f.blocks:
                for row in self.rows(f"{f.name}:{b.name}"):
                    if row.memory:
                        mem += row.cost
                    else:
                        comp += row.cost
            self._static[f.name] = (comp, mem)
        return self._static[f.name]

    def static_shared(self, fn) -> int:
        """Bytes of .shared variables kernel ``fn`` uses (kernel_resources)."""
        if fn.name not in self._shared:
            from ptxc.gpus.kernel_resources import static_shared
            self._shared[fn.name] = static_shared(self.module, fn)
        return self._shared[fn.name]

    def _function_rows(self, f) -> None:
        n = 0
        for b in f.blocks:
            rows = []
            for ins in b.body:
                n += 1
                memory = self._is_memory(ins)
                rows.append(InstrRow(self._cost(ins), memory, access_bytes(ins) if memory else 0,
                                     f"{f.name}:{n}", instr_class(ins)))
            self._rows[f"{f.name}:{b.name}"] = rows
