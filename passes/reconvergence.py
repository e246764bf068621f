"""Reconvergence points of conditional branches: the immediate post-dominator.

In the SIMT stack model (GPGPU-Sim; Fung et al., "Dynamic Warp Formation",
MICRO 2007; METRICS.md) a warp that diverges at a conditional branch runs both
paths and reconverges at the branch block's immediate post-dominator (IPDOM).
A conditional branch is a guarded ``bra`` or a ``brx.idx``; ``bra.uni`` is a
branch the programmer declared non-divergent, listed in ``uniform``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.ir import LabelRef
from ptxc.ir.passmanager import Analysis, Pass, PassResult

from .cfg import defined_functions
from .postdomtree import PostDomTree


def is_conditional_branch(ins) -> bool:
    return ins.opcode == "brx" or (ins.opcode == "bra" and ins.guard is not None)


def branch_targets(ins) -> list:
    """Names of the blocks a branch can jump to (not its fall-through)."""
    if ins.opcode == "bra":
        return [op.name for op in ins.srcs if isinstance(op, LabelRef)]
    succs = list(ins.block.succs)
    if ins.guard is not None and ins.block.fallthrough in succs:
        succs.remove(ins.block.fallthrough)
    return [s.name for s in succs]


class ReconvergenceInfo:
    """``points``: conditional branch Instr -> reconvergence Block (None = exit),
    in layout order; ``uniform``: the ``.uni`` branches among them."""

    def __init__(self, fn, points: dict, uniform: list):
        self.function = fn
        self.points = points
        self.uniform = uniform
        self._uniform_ids = {id(u) for u in uniform}

    def is_uniform(self, ins) -> bool:
        return id(ins) in self._uniform_ids


class Reconvergence(Analysis):
    name = "reconvergence"

    @classmethod
    def compute(cls, fn, am) -> ReconvergenceInfo:
        pdt = am.get(PostDomTree, fn)
        points, uniform = {}, []
        for b in fn.blocks:
            term = b.terminator
            if term is None or not is_conditional_branch(term):
                continue
            points[term] = pdt.ipdom(b)
            if "uni" in term.mods:
                uniform.append(term)
        return ReconvergenceInfo(fn, points, uniform)


def branch_record(fn, ins, point, uniform: bool) -> dict:
    return {"function": fn.name, "block": ins.block.name,
            "line": ins.loc.line if ins.loc else None,
            "targets": branch_targets(ins),
            "reconverge": point.name if point is not None else "exit",
            "uniform": uniform}


def _line(r: dict) -> str:
    text = (f"  {r['block']} line {r['line']}: -> {', '.join(r['targets'])}"
            f"; reconverge at {r['reconverge']}")
    return text + " (uniform)" if r["uniform"] else text


@dataclass(frozen=True)
class ReconvergencePass(Pass):
    name = "reconvergence"
    summary = "print each conditional branch's reconvergence point (its IPDOM)"

    def run(self, module, am) -> PassResult:
        lines, data = [], []
        for fn in defined_functions(module):
            info = am.get(Reconvergence, fn)
            lines.append(f"reconvergence @{fn.name}: {len(info.points)} conditional branches")
            for ins, point in info.points.items():
                rec = branch_record(fn, ins, point, info.is_uniform(ins))
                data.append(rec)
                lines.append(_line(rec))
        return PassResult(self.name, "\n".join(lines) + "\n" if lines else "", data)
