"""Post-dominator trees on hand-built CFGs, and a property test against brute force."""
from cfgutil import block, brute_postdom, build, names, nx_idoms, random_function, reach_from
from hypothesis import given, settings, strategies as st

from ptxc.passes.cfg import CFG
from ptxc.passes.postdomtree import PostDomTree
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.pipeline import run_pipeline


def pdt(fn):
    return AnalysisManager(fn.module).get(PostDomTree, fn)


def ipdoms(fn) -> dict:
    p = pdt(fn)
    return {b.name: (p.ipdom(b).name if p.ipdom(b) else "exit") for b in fn.blocks}


def test_diamond():
    fn = build("a>b,c b>d c>d d>")
    assert ipdoms(fn) == {"a": "d", "b": "d", "c": "d", "d": "exit"}
    p = pdt(fn)
    a, b, c, d = fn.blocks
    assert p.postdominates(d, a) and p.postdominates(None, a) and not p.postdominates(b, a)
    assert names(p.children(d)) == ["a", "b", "c"] and names(p.children(None)) == ["d"]
    assert names(p.frontier(b)) == ["a"] and p.frontier(d) == []


def test_loop():
    fn = build("e>h h>b,x b>h x>")
    assert ipdoms(fn) == {"e": "h", "h": "x", "b": "h", "x": "exit"}


def test_early_exit():
    fn = build("a>b,x b>c,r c>x r> x>")
    assert ipdoms(fn) == {"a": "exit", "b": "exit", "c": "x", "r": "exit", "x": "exit"}


def test_guarded_ret():
    fn = build("a>b b>c c>", gret={"a"})
    assert ipdoms(fn) == {"a": "exit", "b": "c", "c": "exit"}


def test_infinite_loop_linked_at_its_last_block():
    fn = build("a>b,x b>c c>b x>")
    assert ipdoms(fn) == {"a": "exit", "b": "c", "c": "exit", "x": "exit"}
    assert names(pdt(fn).infinite_loop_exits) == ["c"]


def test_two_sink_loops_below_a_stuck_block():
    fn = build("a>s,x s>l1,l2 l1>l1 l2>l2 x>")
    assert ipdoms(fn) == {"a": "exit", "s": "exit", "l1": "exit", "l2": "exit", "x": "exit"}
    assert names(pdt(fn).infinite_loop_exits) == ["l1", "l2"]


def test_function_that_never_exits():
    fn = build("a>b b>a")
    assert ipdoms(fn) == {"a": "b", "b": "exit"}


def test_unreachable_block_still_has_ipdom():
    fn = build("a>c u>c c>")
    assert ipdoms(fn) == {"a": "c", "u": "c", "c": "exit"}
    assert pdt(fn).postdominates(block(fn, "c"), block(fn, "u"))


def test_pass_text():
    fn = build("a>b,x b>c c>b x>")
    r = run_pipeline(fn.module, "postdomtree")["postdomtree"]
    assert r.text.splitlines() == [
        "postdomtree @k", "  a -> exit", "  b -> c", "  c -> exit", "  x -> exit",
        "  no path to exit; linked to exit: c"]
    assert r.data == {"k": {"a": "exit", "b": "c", "c": "exit", "x": "exit"}}


# ------------------------------------------------------- property test

def _check_links(succs, exits, linked):
    """Every sink SCC of the blocks that reach no exit has exactly one linked
    block, its last in layout order; no other block is linked."""
    import networkx as nx
    n = len(succs)
    stuck = [v for v in range(n) if not (reach_from(v, succs) & set(exits))]
    g = nx.DiGraph()
    g.add_nodes_from(stuck)
    g.add_edges_from((a, b) for a in stuck for b in succs[a] if b in stuck)
    cond = nx.condensation(g)
    sinks = [max(cond.nodes[c]["members"]) for c in cond if cond.out_degree(c) == 0]
    assert sorted(sinks) == linked


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_postdominators_match_brute_force_and_networkx(data):
    succs, gret, fn = random_function(data)
    am = AnalysisManager(fn.module)
    p, cfg = am.get(PostDomTree, fn), am.get(CFG, fn)
    n, exits = len(succs), [b.index for b in cfg.exits]
    assert exits == [v for v in range(n) if not succs[v] or f"n{v}" in gret]
    linked = [b.index for b in p.infinite_loop_exits]
    _check_links(succs, exits, linked)
    brute = brute_postdom(succs, exits, linked)
    blocks = fn.blocks
    for a in blocks:
        assert {b.index for b in blocks if p.postdominates(a, b)} == brute[a.index] - {n}
    rev = [[] for _ in range(n + 1)]
    for v, ss in enumerate(succs):
        for s in ss:
            rev[s].append(v)
        if v in exits or v in linked:
            rev[n].append(v)
    expected = nx_idoms(rev, n)
    for b in blocks:
        got = p.ipdom(b)
        assert (n if got is None else got.index) == expected[b.index]
