"""Natural loops and irreducible cycles.

A back edge is an edge t -> h whose target dominates its source; the natural
loop of h is h plus every block that reaches a latch t without passing h
(Aho, Sethi, Ullman, "Compilers", 1986, 10.4); back edges to one header share
one loop. Natural loops with different headers are nested or disjoint, so the
parent of a loop is the smallest other loop that contains its header.

A retreating edge of a depth-first search from the entry (an edge to a block
still on the search stack) that is not a back edge closes a cycle with more
than one entry: an irreducible region, reported with the strongly connected
component that contains it (Tarjan 1972; see Havlak, TOPLAS 1997).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptxc.ir.passmanager import Analysis, Pass, PassResult

from .cfg import CFG, defined_functions
from .domtree import DomTree
from .postdomtree import sccs


@dataclass
class Loop:
    header: object
    latches: list = field(default_factory=list)     # layout order
    blocks: list = field(default_factory=list)      # body incl. header, layout order
    depth: int = 1
    parent: "Loop | None" = None


@dataclass
class Irreducible:
    source: object      # tail of the retreating edge
    target: object      # head of the retreating edge
    blocks: list        # the strongly connected component, layout order


class LoopInfo:
    """``loops`` (in layout order of their headers), ``irreducible``, and
    ``loop_of(b)``: the innermost loop that contains b, or None."""

    def __init__(self, fn, loops: list, innermost: list, irreducible: list):
        self.function = fn
        self.loops = loops
        self._innermost = innermost
        self.irreducible = irreducible

    def loop_of(self, b):
        return self._innermost[b.index]

    def depth(self, b) -> int:
        loop = self._innermost[b.index]
        return loop.depth if loop else 0


def retreating_edges(n: int, succs: list[list[int]]) -> list[tuple[int, int]]:
    """Edges (t, h) to a node on the DFS stack, from node 0, in discovery order."""
    if n == 0:
        return []
    state = [0] * n          # 0 new, 1 on stack, 2 done
    out = []
    state[0] = 1
    stack = [(0, iter(succs[0]))]
    while stack:
        v, it = stack[-1]
        for s in it:
            if state[s] == 1:
                out.append((v, s))
            elif state[s] == 0:
                state[s] = 1
                stack.append((s, iter(succs[s])))
                break
        else:
            stack.pop()
            state[v] = 2
    return out


def loop_body(header: int, latches: list[int], preds: list[list[int]],
              reachable: list[bool]) -> list[int]:
    """Sorted nodes of the natural loop of header with these latches
    (blocks the entry does not reach are left out)."""
    inside = {header}
    stack = [t for t in latches if t != header]
    inside.update(stack)
    while stack:
        for p in preds[stack.pop()]:
            if p not in inside and reachable[p]:
                inside.add(p)
                stack.append(p)
    return sorted(inside)


def _nest(loops: list[Loop], bodies: list[list[int]], n: int) -> list:
    """Set parents and depths; return innermost loop per node."""
    innermost: list = [None] * n
    for k in sorted(range(len(loops)), key=lambda k: -len(bodies[k])):
        loop = loops[k]
        loop.parent = innermost[loop.header.index]
        loop.depth = loop.parent.depth + 1 if loop.parent else 1
        for v in bodies[k]:
            innermost[v] = loop
    return innermost


def _irreducible(cfg, dom, retreat: list[tuple[int, int]]) -> list[Irreducible]:
    bad = [(t, h) for t, h in retreat if not dom.tree.dominates(h, t)]
    if not bad:
        return []
    n = len(cfg.blocks)
    comps = sccs([b.index for b in cfg.reachable], cfg.succ_idx, cfg.reach_flags)
    comp_of = [0] * n
    for k, comp in enumerate(comps):
        for v in comp:
            comp_of[v] = k
    blocks = cfg.blocks
    return [Irreducible(blocks[t], blocks[h], [blocks[v] for v in comps[comp_of[t]]])
            for t, h in bad]


class Loops(Analysis):
    name = "loops"

    @classmethod
    def compute(cls, fn, am) -> LoopInfo:
        cfg = am.get(CFG, fn)
        dom = am.get(DomTree, fn)
        n, blocks = len(cfg.blocks), cfg.blocks
        retreat = retreating_edges(n, cfg.succ_idx)
        latches: dict[int, list[int]] = {}
        for t, h in retreat:
            if dom.tree.dominates(h, t) and t not in latches.setdefault(h, []):
                latches[h].append(t)
        loops, bodies = [], []
        for h in sorted(latches):
            body = loop_body(h, latches[h], cfg.pred_idx, cfg.reach_flags)
            bodies.append(body)
            loops.append(Loop(blocks[h], [blocks[t] for t in sorted(latches[h])],
                              [blocks[v] for v in body]))
        innermost = _nest(loops, bodies, n)
        return LoopInfo(fn, loops, innermost, _irreducible(cfg, dom, retreat))


def _loop_line(loop: Loop) -> str:
    parent = loop.parent.header.name if loop.parent else "-"
    return (f"  loop {loop.header.name}: depth {loop.depth}, parent {parent}, "
            f"latches {' '.join(b.name for b in loop.latches)}, "
            f"blocks {' '.join(b.name for b in loop.blocks)}")


def _loop_data(loop: Loop) -> dict:
    return {"header": loop.header.name, "depth": loop.depth,
            "parent": loop.parent.header.name if loop.parent else None,
            "latches": [b.name for b in loop.latches],
            "blocks": [b.name for b in loop.blocks]}


def _irr_line(irr: Irreducible) -> str:
    return (f"  irreducible {irr.source.name} -> {irr.target.name}: "
            f"blocks {' '.join(b.name for b in irr.blocks)}")


@dataclass(frozen=True)
class LoopsPass(Pass):
    name = "loops"
    summary = "print natural loops (header, latches, body, nesting) and irreducible cycles"

    def run(self, module, am) -> PassResult:
        lines, data = [], {}
        for fn in defined_functions(module):
            info = am.get(Loops, fn)
            lines.append(f"loops @{fn.name}: {len(info.loops)} loops"
                         + (f", {len(info.irreducible)} irreducible" if info.irreducible else ""))
            lines.extend(_loop_line(loop) for loop in info.loops)
            lines.extend(_irr_line(irr) for irr in info.irreducible)
            data[fn.name] = {
                "loops": [_loop_data(loop) for loop in info.loops],
                "irreducible": [{"source": i.source.name, "target": i.target.name,
                                 "blocks": [b.name for b in i.blocks]}
                                for i in info.irreducible]}
        return PassResult(self.name, "\n".join(lines) + "\n" if lines else "", data)
