"""Natural loops and irreducible cycles on hand-built CFGs, plus a property test."""
from cfgutil import block, brute_dominates, build, graph_spec, graphs, names, reach_from
from hypothesis import given, settings

from ptxc.passes.loops import Loops
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.pipeline import run_pipeline


def loops(fn):
    return AnalysisManager(fn.module).get(Loops, fn)


def summary(fn) -> list[tuple]:
    return [(lp.header.name, names(lp.latches), names(lp.blocks), lp.depth,
             lp.parent.header.name if lp.parent else None) for lp in loops(fn).loops]


def test_simple_loop():
    assert summary(build("e>h h>b,x b>h x>")) == [("h", ["b"], ["h", "b"], 1, None)]


def test_nested_loops():
    fn = build("e>h1 h1>h2,x h2>b,l1 b>h2 l1>h1 x>")
    assert summary(fn) == [("h1", ["l1"], ["h1", "h2", "b", "l1"], 1, None),
                           ("h2", ["b"], ["h2", "b"], 2, "h1")]
    info = loops(fn)
    assert info.loop_of(block(fn, "b")).header.name == "h2"
    assert info.depth(block(fn, "l1")) == 1 and info.depth(block(fn, "x")) == 0
    assert info.loop_of(block(fn, "e")) is None


def test_self_loop_on_entry():
    assert summary(build("a>a,x x>")) == [("a", ["a"], ["a"], 1, None)]


def test_two_latches_one_loop():
    assert summary(build("e>h h>b,c b>h,x c>h x>")) == [("h", ["b", "c"], ["h", "b", "c"], 1, None)]


def test_irreducible():
    fn = build("a>b,c b>c,x c>b x>")
    info = loops(fn)
    assert info.loops == []
    [irr] = info.irreducible
    assert (irr.source.name, irr.target.name, names(irr.blocks)) == ("c", "b", ["b", "c"])


def test_unreachable_blocks_stay_out():
    assert summary(build("a>x u>v v>u x>")) == []
    assert summary(build("e>h h>b,x b>h u>b x>")) == [("h", ["b"], ["h", "b"], 1, None)]


def test_pass_text():
    fn = build("e>h1 h1>h2,x h2>b,l1 b>h2 l1>h1 x> i>j,k j>k k>j", name="k")
    r = run_pipeline(fn.module, "loops")["loops"]
    assert r.text.splitlines() == [
        "loops @k: 2 loops",
        "  loop h1: depth 1, parent -, latches l1, blocks h1 h2 b l1",
        "  loop h2: depth 2, parent h1, latches b, blocks h2 b",
    ]
    fn = build("a>b,c b>c,x c>b x>")
    r = run_pipeline(fn.module, "loops")["loops"]
    assert r.text.splitlines() == ["loops @k: 0 loops, 1 irreducible",
                                   "  irreducible c -> b: blocks b c"]
    assert r.data == {"k": {"loops": [], "irreducible": [
        {"source": "c", "target": "b", "blocks": ["b", "c"]}]}}


# ------------------------------------------------------- property test

def _brute_loops(succs) -> dict:
    """header -> (latches, body) from the definition of natural loops."""
    dom = brute_dominates(succs, 0)
    reach = dom[0]
    out: dict = {}
    for t in sorted(reach):
        for h in succs[t]:
            if t in dom[h]:
                latches, _ = out.setdefault(h, (set(), set()))
                latches.add(t)
    for h, (latches, body) in out.items():
        body.update(v for v in reach if v == h or reach_from(v, succs, h) & latches)
    return out


def _reducible(succs) -> bool:
    import networkx as nx
    dom = brute_dominates(succs, 0)
    g = nx.DiGraph()
    g.add_nodes_from(dom[0])
    g.add_edges_from((t, h) for t in dom[0] for h in succs[t] if t not in dom[h])
    return nx.is_directed_acyclic_graph(g)


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_loops_match_definition(succs):
    fn = build(graph_spec(succs))
    info = loops(fn)
    brute = _brute_loops(succs)
    got = {lp.header.index: ({b.index for b in lp.latches}, {b.index for b in lp.blocks})
           for lp in info.loops}
    assert got == brute
    for lp in info.loops:
        outer = [o for o in info.loops if o is not lp and lp.header in o.blocks]
        want = min(outer, key=lambda o: len(o.blocks)) if outer else None
        assert lp.parent is want
        assert lp.depth == len(outer) + 1
    assert (info.irreducible == []) == _reducible(succs)
