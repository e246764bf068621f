"""Reconvergence points (IPDOM of each conditional branch) on hand-built CFGs."""
from cfgutil import build

from ptxc.passes.reconvergence import Reconvergence
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.pipeline import run_pipeline


def points(fn, **kw) -> list[tuple]:
    info = AnalysisManager(fn.module).get(Reconvergence, fn)
    return [(ins.block.name, p.name if p else "exit", info.is_uniform(ins))
            for ins, p in info.points.items()]


def test_diamond():
    assert points(build("a>b,c b>d c>d d>")) == [("a", "d", False)]


def test_loop_branch_reconverges_after_the_loop():
    assert points(build("e>h h>b,x b>h x>")) == [("h", "x", False)]


def test_early_exit_reconverges_at_exit():
    assert points(build("a>b,x b>c,r c>x r> x>")) == [("a", "exit", False), ("b", "exit", False)]


def test_brx_and_uniform():
    fn = build("a>b,c,d b>e c>e d>e,f e>g f>g g>", uni={"d"})
    assert points(fn) == [("a", "g", False), ("d", "g", True)]   # a -> d -> f skips e
    info = AnalysisManager(fn.module).get(Reconvergence, fn)
    assert [i.block.name for i in info.uniform] == ["d"]


def test_unconditional_branches_are_not_listed():
    assert points(build("a>b b>c c>")) == []


def test_pass_text_and_data():
    fn = build("a>b,c,d b>e c>e d>e,f e>g f>g g>", uni={"d"})
    r = run_pipeline(fn.module, "reconvergence")["reconvergence"]
    assert r.text.splitlines() == [
        "reconvergence @k: 2 conditional branches",
        "  a line 10: -> b, c, d; reconverge at g",
        "  d line 13: -> e; reconverge at g (uniform)",
    ]
    assert r.data[1] == {"function": "k", "block": "d", "line": 13, "targets": ["e"],
                         "reconverge": "g", "uniform": True}
