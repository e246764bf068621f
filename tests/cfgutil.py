"""Hand-built CFGs for the analysis tests (no parser needed).

``build("a>b,c b>d c>d d>")`` makes a function with blocks a, b, c, d in that
layout order. The terminator follows the number of successors: none ->
``ret``; one -> ``bra``; two -> ``@%p bra first`` falling through to the
second; more -> ``brx.idx``. Blocks listed in ``fall`` end without a
terminator (they fall through to their one successor, or off the end).
Blocks listed in ``gret`` end with ``@%p ret`` and fall through to their one
successor. ``uni`` blocks use ``bra.uni``.
"""
from __future__ import annotations

from ptxc.errors import SrcLoc
from ptxc.ir import Block, Function, Instr, LabelRef, Module, Value
from ptxc.ir.opcodes import lookup


def _instr(opcode, mods=(), srcs=None, guard=None, line=1):
    return Instr(opcode, mods, [], srcs or [], guard, info=lookup(opcode),
                 loc=SrcLoc("test.ptx", line))


def parse_spec(spec: str) -> list[tuple[str, list[str]]]:
    out = []
    for tok in spec.split():
        name, _, succs = tok.partition(">")
        out.append((name, [s for s in succs.split(",") if s]))
    return out


def _terminator(b, succs, blocks, pred, gret, uni, fall, line):
    if b.name in gret:
        return _instr("ret", guard=pred, line=line)
    if b.name in fall:
        return _instr("add", ("s32",), line=line)
    if not succs:
        return _instr("ret", line=line)
    mods = ("uni",) if b.name in uni else ()
    if len(succs) == 1:
        return _instr("bra", mods, [LabelRef(succs[0], blocks[succs[0]])], line=line)
    if len(succs) == 2:
        return _instr("bra", mods, [LabelRef(succs[0], blocks[succs[0]])], guard=pred, line=line)
    return _instr("brx", ("idx",), [Value("u32", "%r0", "%r0")], line=line)


def build(spec: str, gret=(), uni=(), fall=(), name: str = "k") -> Function:
    """A Function whose CFG is ``spec`` (see the module docstring)."""
    fn = Function(name, True)
    pred = Value("pred", "%p", "%p")
    entries = parse_spec(spec)
    blocks = {}
    for i, (bname, _) in enumerate(entries):
        b = Block(bname, bname)
        b.index, b.function = i, fn
        blocks[bname] = b
        fn.blocks.append(b)
    for i, (bname, succs) in enumerate(entries):
        b = blocks[bname]
        b.succs = [blocks[s] for s in succs]
        for s in b.succs:
            s.preds.append(b)
        if succs and (len(succs) == 2 or b.name in gret or b.name in fall):
            b.fallthrough = b.succs[-1]
        ins = _terminator(b, succs, blocks, pred, set(gret), set(uni), set(fall), 10 + i)
        ins.block = b
        b.instrs.append(ins)
    mod = Module("test.ptx")
    mod.functions.append(fn)
    fn.module = mod
    return fn


def block(fn, name: str) -> Block:
    return next(b for b in fn.blocks if b.name == name)


def names(blocks) -> list[str]:
    return [b.name for b in blocks]


# ------------------------------------------------ random graphs (hypothesis)

def graph_spec(succs: list[list[int]]) -> str:
    """The build() spec of a graph given as adjacency lists (node i = 'n<i>')."""
    return " ".join(f"n{i}>" + ",".join(f"n{s}" for s in ss) for i, ss in enumerate(succs))


def reach_from(start, succs: list[list[int]], removed=None) -> set:
    """Nodes reachable from start without entering ``removed`` (brute force)."""
    if start == removed:
        return set()
    seen, stack = {start}, [start]
    while stack:
        for s in succs[stack.pop()]:
            if s not in seen and s != removed:
                seen.add(s)
                stack.append(s)
    return seen


def brute_dominates(succs: list[list[int]], root) -> dict:
    """dom[a] = set of nodes a dominates: a == b, or b unreachable without a."""
    every = reach_from(root, succs)
    return {a: ({a} | (every - reach_from(root, succs, a))) if a in every else set()
            for a in range(len(succs))}


def nx_idoms(succs: list[list[int]], root) -> dict:
    """networkx's immediate dominators (root left out, as networkx >= 3.6 does)."""
    import networkx as nx
    g = nx.DiGraph()
    g.add_nodes_from(range(len(succs)))
    g.add_edges_from((a, b) for a, ss in enumerate(succs) for b in ss)
    out = dict(nx.immediate_dominators(g, root))
    out.pop(root, None)
    return out


def graphs(max_nodes: int = 9):
    """Hypothesis strategy of random CFGs as adjacency lists: any edges, so
    irreducible cycles, unreachable blocks, duplicate edges and blocks that
    reach no exit all occur."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw):
        n = draw(st.integers(1, max_nodes))
        node = st.integers(0, n - 1)
        return [draw(st.lists(node, max_size=3)) for _ in range(n)]
    return strategy()


def random_function(data):
    """(succs, gret, Function) drawn by hypothesis: a random CFG where some
    one-successor blocks end with a guarded ``ret`` instead of a ``bra``."""
    from hypothesis import strategies as st
    succs = data.draw(graphs())
    gret = {f"n{i}" for i, ss in enumerate(succs)
            if len(ss) == 1 and data.draw(st.booleans())}
    return succs, gret, build(graph_spec(succs), gret=gret)


def brute_postdom(succs: list[list[int]], exits: list[int], linked: list[int]) -> dict:
    """pdom[a] = nodes a post-dominates, on the graph plus a virtual exit n that
    ``exits`` and ``linked`` flow into: a == b, or b cannot reach n without a."""
    n = len(succs)
    aug = [list(ss) + ([n] if v in exits or v in linked else []) for v, ss in enumerate(succs)]
    aug.append([])
    out = {}
    for a in range(n + 1):
        out[a] = {b for b in range(n + 1) if b == a or n not in reach_from(b, aug, a)}
    return out
