"""Control dependence from the post-dominator tree.

J. Ferrante, K. J. Ottenstein, J. D. Warren, "The Program Dependence Graph and
Its Use in Optimization", TOPLAS 1987 (as phrased by Cytron et al., TOPLAS
1991): for every CFG edge A -> B where B does not post-dominate A, every block
on the post-dominator tree path from B up to ipdom(A), ipdom(A) excluded, is
control dependent on A (on A's branch). The artificial edges that postdomtree
adds for infinite loops count as edges to the virtual exit, so a block that
ends with a guarded ``ret`` controls its fall-through successor.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.ir.passmanager import Analysis, Pass, PassResult

from .cfg import CFG, defined_functions
from .postdomtree import PostDomTree


class ControlDepInfo:
    """``deps[B]``: the blocks B is control dependent on, in layout order;
    ``dependents[A]``: the blocks control dependent on A, in layout order."""

    def __init__(self, fn, deps: dict, dependents: dict):
        self.function = fn
        self.deps = deps
        self.dependents = dependents


def control_deps(n: int, succs: list[list[int]], ipdom: list[int]) -> list[list[int]]:
    """dep[b] = sorted nodes b is control dependent on. ``ipdom[v]`` is the
    parent of v in the post-dominator tree (n = virtual exit)."""
    dep: list[list[int]] = [[] for _ in range(n)]
    for a in range(n):
        stop = ipdom[a]
        for b in succs[a]:
            runner = b
            while runner != stop and runner != n and runner >= 0:
                if not dep[runner] or dep[runner][-1] != a:
                    dep[runner].append(a)
                runner = ipdom[runner]
    return dep


class ControlDep(Analysis):
    name = "control-dep"

    @classmethod
    def compute(cls, fn, am) -> ControlDepInfo:
        cfg = am.get(CFG, fn)
        pdt = am.get(PostDomTree, fn)
        blocks, n = cfg.blocks, len(cfg.blocks)
        dep = control_deps(n, cfg.succ_idx, pdt.tree.idom)
        deps = {b: [blocks[a] for a in dep[b.index]] for b in blocks}
        dependents: dict = {b: [] for b in blocks}
        for b in blocks:                  # b in layout order keeps lists sorted
            for a in deps[b]:
                dependents[a].append(b)
        return ControlDepInfo(fn, deps, dependents)


@dataclass(frozen=True)
class ControlDepPass(Pass):
    name = "control-dep"
    summary = "print the blocks whose branch decides whether each block runs"

    def run(self, module, am) -> PassResult:
        lines, data = [], {}
        for fn in defined_functions(module):
            info = am.get(ControlDep, fn)
            lines.append(f"control-dep @{fn.name}")
            data[fn.name] = {b.name: [a.name for a in info.deps[b]] for b in fn.blocks}
            for b in fn.blocks:
                on = " ".join(a.name for a in info.deps[b]) or "-"
                lines.append(f"  {b.name} <- {on}")
        return PassResult(self.name, "\n".join(lines) + "\n" if lines else "", data)
