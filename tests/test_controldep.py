"""Control dependence on hand-built CFGs, and a property test against its definition."""
from cfgutil import brute_postdom, build, random_function
from hypothesis import given, settings, strategies as st

from ptxc.passes.cfg import CFG
from ptxc.passes.controldep import ControlDep
from ptxc.passes.postdomtree import PostDomTree
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.pipeline import run_pipeline


def deps(fn) -> dict:
    info = AnalysisManager(fn.module).get(ControlDep, fn)
    return {b.name: [a.name for a in info.deps[b]] for b in fn.blocks}


def test_diamond():
    assert deps(build("a>b,c b>d c>d d>")) == {"a": [], "b": ["a"], "c": ["a"], "d": []}


def test_loop_header_depends_on_itself():
    assert deps(build("e>h h>b,x b>h x>")) == {"e": [], "h": ["h"], "b": ["h"], "x": []}


def test_guarded_ret_controls_what_follows():
    assert deps(build("a>b b>c c>", gret={"a"})) == {"a": [], "b": ["a"], "c": ["a"]}


def test_early_exit():
    fn = build("a>b,x b>c,r c>x r> x>")
    assert deps(fn) == {"a": [], "b": ["a"], "c": ["b"], "r": ["b"], "x": ["a", "b"]}
    info = AnalysisManager(fn.module).get(ControlDep, fn)
    assert [b.name for b in info.dependents[fn.blocks[1]]] == ["c", "r", "x"]


def test_pass_text():
    fn = build("a>b,c b>d c>d d>")
    r = run_pipeline(fn.module, "control-dep")["control-dep"]
    assert r.text == "control-dep @k\n  a <- -\n  b <- a\n  c <- a\n  d <- -\n"
    assert r.data == {"k": {"a": [], "b": ["a"], "c": ["a"], "d": []}}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_control_dependence_matches_definition(data):
    """Y is control dependent on X iff X has a successor S that Y post-dominates
    and Y does not strictly post-dominate X (Ferrante et al. 1987)."""
    succs, _, fn = random_function(data)
    am = AnalysisManager(fn.module)
    exits = [b.index for b in am.get(CFG, fn).exits]
    linked = [b.index for b in am.get(PostDomTree, fn).infinite_loop_exits]
    pdom = brute_postdom(succs, exits, linked)
    info = am.get(ControlDep, fn)
    for y in fn.blocks:
        want = [x for x in range(len(succs))
                if any(s in pdom[y.index] for s in succs[x])
                and not (x in pdom[y.index] and x != y.index)]
        assert [a.index for a in info.deps[y]] == want
