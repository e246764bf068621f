"""Post-dominator trees: dominators of the reversed CFG with a virtual exit.

As in Cranelift and LLVM, the post-dominator tree is the ordinary dominator
tree (Cooper-Harvey-Kennedy, see domtree.py) of the reversed CFG, rooted at a
virtual exit node that every exit block (``ret``/``exit``/``trap``, guarded
ones included, and falling off the end) flows into.

Blocks from which no exit is reachable (infinite loops) would otherwise have no
post-dominator. Like LLVM's PostDominatorTree we give them one: every sink
strongly connected component of the blocks that cannot reach an exit (Tarjan,
1972) gets an artificial edge to the virtual exit from its last block in
layout order. Every block then reaches the virtual exit, so ``ipdom`` is
defined for all blocks; ``None`` stands for the virtual exit.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.ir.passmanager import Analysis, Pass, PassResult

from .cfg import CFG, defined_functions
from .domtree import IntDomTree, dominator_tree


def can_reach(n: int, targets: list[int], preds: list[list[int]]) -> list[bool]:
    """Which nodes reach one of ``targets`` (backward search along preds)."""
    seen = [False] * n
    stack = list(targets)
    for t in targets:
        seen[t] = True
    while stack:
        for p in preds[stack.pop()]:
            if not seen[p]:
                seen[p] = True
                stack.append(p)
    return seen


def sccs(nodes: list[int], succs: list[list[int]], inside: list[bool]) -> list[list[int]]:
    """Strongly connected components of the subgraph on ``nodes`` (Tarjan,
    iterative), in reverse topological order: sinks come first."""
    n = len(succs)
    index, low = [-1] * n, [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out: list[list[int]] = []
    clock = 0
    for start in nodes:
        if index[start] >= 0:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = clock
                clock += 1
                stack.append(v)
                on_stack[v] = True
            edges = succs[v]
            while i < len(edges):
                w = edges[i]
                i += 1
                if not inside[w]:
                    continue
                if index[w] < 0:
                    work.append((v, i))
                    work.append((w, 0))
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
    return out


def infinite_loop_exits(n: int, succs: list[list[int]], reaches: list[bool]) -> list[int]:
    """One block per sink SCC among the blocks that reach no exit: its last
    block in layout order (these get an artificial edge to the virtual exit)."""
    stuck = [v for v in range(n) if not reaches[v]]
    if not stuck:
        return []
    inside = [not r for r in reaches]
    comp_of = [-1] * n
    comps = sccs(stuck, succs, inside)
    for k, comp in enumerate(comps):
        for v in comp:
            comp_of[v] = k
    reps = []
    for k, comp in enumerate(comps):
        if all(comp_of[w] == k for v in comp for w in succs[v] if inside[w]):
            reps.append(comp[-1])
    return sorted(reps)


class PostDomTreeInfo:
    """Post-dominators of one function's blocks (None = the virtual exit)."""

    def __init__(self, fn, tree: IntDomTree, linked: list[int]):
        self.function = fn
        self.blocks = list(fn.blocks)
        self.tree = tree
        self.virtual_exit = len(self.blocks)
        # blocks linked to the virtual exit because they reach no real exit
        self.infinite_loop_exits = [self.blocks[v] for v in linked]

    def _block(self, v: int):
        return None if v < 0 or v == self.virtual_exit else self.blocks[v]

    def ipdom(self, b):
        """The immediate post-dominator of b, or None for the virtual exit."""
        return self._block(self.tree.idom[b.index])

    def postdominates(self, a, b) -> bool:
        """True if every path from b to the exit passes through a (a == b too).
        ``a`` may be None, the virtual exit, which post-dominates everything."""
        va = self.virtual_exit if a is None else a.index
        return self.tree.dominates(va, b.index)

    def children(self, b) -> list:
        v = self.virtual_exit if b is None else b.index
        return [self.blocks[c] for c in self.tree.children[v]]

    def frontier(self, b) -> list:
        """Post-dominance frontier (blocks whose branch decides whether b runs)."""
        return [self.blocks[f] for f in self.tree.frontier(b.index) if f != self.virtual_exit]

    def depth(self, b) -> int:
        """Depth in the tree (virtual exit 0)."""
        return self.tree.depth[b.index]


def build_postdom(n: int, succs: list[list[int]], preds: list[list[int]],
                  exits: list[int]) -> tuple[IntDomTree, list[int]]:
    """Post-dominator tree of a graph of n nodes; node n is the virtual exit."""
    x = n
    reaches = can_reach(n, exits, preds)
    linked = infinite_loop_exits(n, succs, reaches)
    to_exit = [False] * n
    for v in exits + linked:
        to_exit[v] = True
    rsuccs = [preds[v] for v in range(n)] + [sorted(exits + linked)]
    rpreds = [succs[v] + [x] if to_exit[v] else succs[v] for v in range(n)] + [[]]
    return dominator_tree(n + 1, x, rsuccs, rpreds), linked


class PostDomTree(Analysis):
    """Analysis: :class:`PostDomTreeInfo` of a function."""
    name = "postdomtree"

    @classmethod
    def compute(cls, fn, am) -> PostDomTreeInfo:
        cfg = am.get(CFG, fn)
        exits = [b.index for b in cfg.exits]
        tree, linked = build_postdom(len(cfg.blocks), cfg.succ_idx, cfg.pred_idx, exits)
        return PostDomTreeInfo(fn, tree, linked)


def _name(b) -> str:
    return "exit" if b is None else b.name


@dataclass(frozen=True)
class PostDomTreePass(Pass):
    name = "postdomtree"
    summary = "print each block's immediate post-dominator ('exit' = virtual exit)"

    def run(self, module, am) -> PassResult:
        lines, data = [], {}
        for fn in defined_functions(module):
            info = am.get(PostDomTree, fn)
            lines.append(f"postdomtree @{fn.name}")
            data[fn.name] = {b.name: _name(info.ipdom(b)) for b in info.blocks}
            lines.extend(f"  {b.name} -> {_name(info.ipdom(b))}" for b in info.blocks)
            if info.infinite_loop_exits:
                names = " ".join(b.name for b in info.infinite_loop_exits)
                lines.append(f"  no path to exit; linked to exit: {names}")
        return PassResult(self.name, "\n".join(lines) + "\n" if lines else "", data)
