"""Dominator trees on hand-built CFGs, and a property test against brute force."""
from cfgutil import block, brute_dominates, build, graph_spec, graphs, names, nx_idoms
from hypothesis import given, settings

from ptxc.passes.domtree import DomTree
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.pipeline import run_pipeline


def dom(fn):
    return AnalysisManager(fn.module).get(DomTree, fn)


def idoms(fn) -> dict:
    d = dom(fn)
    return {b.name: (d.idom[b].name if d.idom[b] else None) for b in fn.blocks}


def test_diamond():
    fn = build("a>b,c b>d c>d d>")
    d = dom(fn)
    assert idoms(fn) == {"a": None, "b": "a", "c": "a", "d": "a"}
    a, b, c, dd = fn.blocks
    assert names(d.children(a)) == ["b", "c", "d"]
    assert names(d.frontier(b)) == ["d"] and names(d.frontier(c)) == ["d"]
    assert d.frontier(a) == [] and d.frontier(dd) == []
    assert [d.depth(x) for x in fn.blocks] == [0, 1, 1, 1]
    assert d.dominates(a, dd) and d.dominates(b, b) and not d.dominates(b, dd)
    assert d.strictly_dominates(a, b) and not d.strictly_dominates(b, b)


def test_loop():
    fn = build("e>h h>b,x b>h x>")
    d = dom(fn)
    assert idoms(fn) == {"e": None, "h": "e", "b": "h", "x": "h"}
    h, b = block(fn, "h"), block(fn, "b")
    assert names(d.frontier(b)) == ["h"] and names(d.frontier(h)) == ["h"]
    assert d.dominates(h, b) and not d.dominates(b, h)


def test_nested_loops():
    fn = build("e>h1 h1>h2,x h2>b,l1 b>h2 l1>h1 x>")
    assert idoms(fn) == {"e": None, "h1": "e", "h2": "h1", "b": "h2", "l1": "h2", "x": "h1"}
    d = dom(fn)
    assert [d.depth(x) for x in fn.blocks] == [0, 1, 2, 3, 3, 2]
    assert names(d.frontier(block(fn, "l1"))) == ["h1"]
    assert names(d.frontier(block(fn, "b"))) == ["h2"]
    assert names(d.frontier(block(fn, "h2"))) == ["h1", "h2"]


def test_entry_in_a_loop():
    fn = build("a>b b>a,x x>")
    d = dom(fn)
    assert idoms(fn) == {"a": None, "b": "a", "x": "b"}
    assert names(d.frontier(fn.blocks[0])) == ["a"] and names(d.frontier(fn.blocks[1])) == ["a"]


def test_unreachable():
    fn = build("a>c u>c c>")
    d = dom(fn)
    u, c = block(fn, "u"), block(fn, "c")
    assert idoms(fn) == {"a": None, "u": None, "c": "a"}
    assert names(d.unreachable) == ["u"] and not d.is_reachable(u)
    assert not d.dominates(u, c) and not d.dominates(c, u) and not d.dominates(u, u)
    assert d.depth(u) == -1 and d.frontier(u) == []


def test_irreducible():
    fn = build("a>b,c b>c,x c>b x>")
    assert idoms(fn) == {"a": None, "b": "a", "c": "a", "x": "b"}
    d = dom(fn)
    assert names(d.frontier(block(fn, "b"))) == ["c"]
    assert names(d.frontier(block(fn, "c"))) == ["b"]


def test_pass_text():
    fn = build("a>c u>c c>")
    r = run_pipeline(fn.module, "domtree")["domtree"]
    assert r.text == "domtree @k\n  a -> entry\n  u -> unreachable\n  c -> a\n"
    assert r.data == {"k": {"a": "entry", "u": "unreachable", "c": "a"}}


# ------------------------------------------------------- property test


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_dominators_match_brute_force_and_networkx(succs):
    fn = build(graph_spec(succs))
    d = dom(fn)
    brute = brute_dominates(succs, 0)
    blocks = fn.blocks
    for a in blocks:
        assert {b.index for b in blocks if d.dominates(a, b)} == brute[a.index]
    reach = brute_dominates(succs, 0)[0]
    expected = nx_idoms(succs, 0)
    for b in blocks:
        got = d.idom[b]
        if b.index in reach and b.index != 0:
            assert got is not None and got.index == expected[b.index]
            assert d.depth(b) == d.depth(got) + 1
        else:
            assert got is None
    for a in blocks:          # dominance frontier, by its definition
        want = sorted(
            y for y in reach
            if any(p.index in reach and a.index in _doms(brute, p.index) for p in blocks[y].preds)
            and not (a.index in _doms(brute, y) and a.index != y))
        assert [f.index for f in d.frontier(a)] == want


def _doms(brute: dict, b: int) -> set:
    return {a for a, s in brute.items() if b in s}
