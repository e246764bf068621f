"""The dynamic inputs of the performance models, from a launch's exact counters.

* **Instruction mix**: warp-level executions per instruction class
  (ptxc.ir.opcodes.count_class: the count pass's classes), computed from the
  per-basic-block warp executions of the launch (``Profile.per_block``,
  exact in hybrid runs too) times the instructions of each block. Phis are
  not instructions.
* **ILP** (instruction-level parallelism of a warp): per basic block, the
  instructions divided by the longest chain of register dependences inside
  the block (every instruction one step); over the launch, the
  warp-execution-weighted ratio sum(execs x instrs) / sum(execs x depth).
  **MLP** is the same over the global loads of a block (a chain counts only
  its loads), over the blocks that contain global or generic loads.

Memory requests, transactions and bank conflicts are taken as they are from
the memory counters (docs/metrics.md, "Memory access counters").
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


def _is_global_load(ins) -> bool:
    return ins.info.family == "load" and not any(
        s in ins.mods for s in ("shared", "local", "param", "const"))


def chain_depth(instrs, counts=lambda ins: True) -> int:
    """The longest register-dependence chain among ``instrs`` (one block),
    counting only the instructions ``counts`` accepts."""
    depth: dict = {}
    best = 0
    for ins in instrs:
        d = max((depth.get(id(getattr(v, "instr", None)), 0)
                 for v in ins.operand_values()), default=0)
        d += 1 if counts(ins) else 0
        depth[id(ins)] = d
        best = max(best, d)
    return best


def parallelism(module, per_block: dict) -> tuple[float, float]:
    """(ILP, MLP) of the launch, weighted by warp executions (module doc)."""
    n_all = d_all = n_ld = d_ld = 0
    for block, execs in executed_blocks(module, per_block):
        instrs = [i for i in block.instrs if not i.is_phi]
        if not instrs:
            continue
        n_all += execs * len(instrs)
        d_all += execs * chain_depth(instrs)
        loads = sum(1 for i in instrs if _is_global_load(i))
        if loads:
            n_ld += execs * loads
            d_ld += execs * chain_depth(instrs, _is_global_load)
    ilp = n_all / d_all if d_all else 1.0
    mlp = n_ld / d_ld if d_ld else 1.0
    return ilp, mlp
