"""Dominator trees: the Cooper-Harvey-Kennedy algorithm and the domtree pass.

K. D. Cooper, T. J. Harvey, K. Kennedy, "A Simple, Fast Dominance Algorithm",
Software Practice & Experience, 2001. Nodes are numbered in post order; the
immediate dominator of a node is the intersection (walk up by post-order
number) of its already processed predecessors, iterated in reverse post order
until nothing changes. The dominance frontier is Figure 5 of the same paper.

The algorithm works on a generic graph given as integer adjacency lists
(:func:`dominator_tree`), so post-dominators run it on the reversed CFG plus a
virtual exit node without copying blocks. Queries ``dominates(a, b)`` are O(1)
through pre/post numbers of a depth-first walk of the tree.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.ir.passmanager import Analysis, Pass, PassResult

from .cfg import CFG, defined_functions, postorder


class IntDomTree:
    """A dominator tree over nodes 0..n-1; ``idom[v]`` is -1 for the root
    and for nodes that the root does not reach."""

    def __init__(self, n: int, root: int, succs: list[list[int]], preds: list[list[int]]):
        self.n, self.root = n, root
        self.preds = preds
        po = postorder(n, root, succs)
        self.rpo = po[::-1]
        self.idom = _chk_idoms(n, root, po, preds)
        self.children: list[list[int]] = [[] for _ in range(n)]
        for v in range(n):
            if self.idom[v] >= 0:
                self.children[self.idom[v]].append(v)
        self.depth = [-1] * n
        self._pre = [-1] * n
        self._post = [-1] * n
        self._number()
        self._frontier: list[list[int]] | None = None

    def reachable(self, v: int) -> bool:
        return self._pre[v] >= 0

    def _number(self) -> None:
        clock = 0
        self.depth[self.root] = 0
        stack = [(self.root, iter(self.children[self.root]))]
        self._pre[self.root] = clock
        while stack:
            v, it = stack[-1]
            c = next(it, None)
            if c is None:
                stack.pop()
                clock += 1
                self._post[v] = clock
                continue
            clock += 1
            self._pre[c] = clock
            self.depth[c] = self.depth[v] + 1
            stack.append((c, iter(self.children[c])))

    def dominates(self, a: int, b: int) -> bool:
        """True if every path from the root to b passes through a (a == b too)."""
        if self._pre[a] < 0 or self._pre[b] < 0:
            return False
        return self._pre[a] <= self._pre[b] and self._post[b] <= self._post[a]

    def frontier(self, v: int) -> list[int]:
        if self._frontier is None:
            self._frontier = _frontiers(self)
        return self._frontier[v]


def _chk_idoms(n: int, root: int, po: list[int], preds: list[list[int]]) -> list[int]:
    """Immediate dominators by Cooper-Harvey-Kennedy iteration."""
    num = [-1] * n
    for i, v in enumerate(po):
        num[v] = i
    idom = [-1] * n
    idom[root] = root
    rpo = po[::-1][1:]
    changed = True
    while changed:
        changed = False
        for b in rpo:
            new = -1
            for p in preds[b]:
                if idom[p] < 0:
                    continue
                if new < 0:
                    new = p
                    continue
                a = p
                while a != new:          # intersect(a, new)
                    while num[a] < num[new]:
                        a = idom[a]
                    while num[new] < num[a]:
                        new = idom[new]
            if idom[b] != new:
                idom[b] = new
                changed = True
    idom[root] = -1
    return idom


def _frontiers(t: IntDomTree) -> list[list[int]]:
    """Dominance frontiers (Cooper-Harvey-Kennedy, Figure 5), sorted by node."""
    df: list[list[int]] = [[] for _ in range(t.n)]
    for b in range(t.n):
        if not t.reachable(b) or (len(t.preds[b]) < 2 and b != t.root):
            continue
        for p in t.preds[b]:
            runner = p
            while t.reachable(runner) and runner != t.idom[b]:
                if not df[runner] or df[runner][-1] != b:
                    df[runner].append(b)
                runner = t.idom[runner]
                if runner < 0:
                    break
    return df


def dominator_tree(n: int, root: int, succs: list[list[int]],
                   preds: list[list[int]]) -> IntDomTree:
    """The dominator tree of a graph given as adjacency lists of ints."""
    return IntDomTree(n, root, succs, preds)


class DomTreeInfo:
    """Dominators of one function's blocks.

    ``idom``: Block -> Block | None (None for the entry and unreachable blocks);
    ``unreachable``: blocks the entry does not reach (layout order).
    """

    def __init__(self, fn, tree: IntDomTree):
        self.function = fn
        self.blocks = list(fn.blocks)
        self.tree = tree
        blocks = self.blocks
        self.idom = {b: (blocks[tree.idom[b.index]] if tree.idom[b.index] >= 0 else None)
                     for b in blocks}
        self.unreachable = [b for b in blocks if not tree.reachable(b.index)]

    def is_reachable(self, b) -> bool:
        return self.tree.reachable(b.index)

    def dominates(self, a, b) -> bool:
        return self.tree.dominates(a.index, b.index)

    def strictly_dominates(self, a, b) -> bool:
        return a is not b and self.tree.dominates(a.index, b.index)

    def children(self, b) -> list:
        return [self.blocks[c] for c in self.tree.children[b.index]]

    def frontier(self, b) -> list:
        return [self.blocks[f] for f in self.tree.frontier(b.index)]

    def depth(self, b) -> int:
        """Depth in the tree (entry 0); -1 for an unreachable block."""
        return self.tree.depth[b.index]


class DomTree(Analysis):
    """Analysis: :class:`DomTreeInfo` of a function."""
    name = "domtree"

    @classmethod
    def compute(cls, fn, am) -> DomTreeInfo:
        cfg = am.get(CFG, fn)
        n = len(cfg.blocks)
        if n == 0:
            return DomTreeInfo(fn, dominator_tree(1, 0, [[]], [[]]))
        return DomTreeInfo(fn, dominator_tree(n, 0, cfg.succ_idx, cfg.pred_idx))


def _idom_name(info: DomTreeInfo, b) -> str:
    if not info.is_reachable(b):
        return "unreachable"
    parent = info.idom[b]
    return parent.name if parent is not None else "entry"


@dataclass(frozen=True)
class DomTreePass(Pass):
    name = "domtree"
    summary = "print each block's immediate dominator (Cooper-Harvey-Kennedy)"

    def run(self, module, am) -> PassResult:
        lines, data = [], {}
        for fn in defined_functions(module):
            info = am.get(DomTree, fn)
            lines.append(f"domtree @{fn.name}")
            data[fn.name] = {}
            for b in info.blocks:
                lines.append(f"  {b.name} -> {_idom_name(info, b)}")
                data[fn.name][b.name] = _idom_name(info, b)
        return PassResult(self.name, "\n".join(lines) + "\n" if lines else "", data)
