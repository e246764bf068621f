"""CFG analysis, report and DOT on hand-built functions."""
from cfgutil import block, build, names

from ptxc.ir import Value
from ptxc.passes.cfg import CFG, CFGInfo, to_dot
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.pipeline import run_pipeline


def info(fn) -> CFGInfo:
    return AnalysisManager(fn.module).get(CFG, fn)


def test_diamond():
    cfg = info(build("a>b,c b>d c>d d>"))
    assert names(cfg.blocks) == ["a", "b", "c", "d"]
    assert cfg.entry.name == "a"
    assert names(cfg.exits) == ["d"]
    assert names(cfg.rpo) == ["a", "c", "b", "d"]     # DFS visits b first
    assert names(cfg.reachable) == ["a", "b", "c", "d"] and cfg.unreachable == []
    assert [(x.name, y.name) for x, y in cfg.edges] == [
        ("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]


def test_unreachable_block():
    fn = build("a>c u>c c>")
    cfg = info(fn)
    assert names(cfg.unreachable) == ["u"]
    assert not cfg.is_reachable(block(fn, "u")) and cfg.is_reachable(block(fn, "c"))
    assert names(cfg.rpo) == ["a", "c"]


def test_guarded_ret_is_exit_with_successor():
    cfg = info(build("a>b b>c c>", gret={"a"}))
    assert names(cfg.exits) == ["a", "c"]


def test_fall_off_end_is_exit_but_fall_through_is_not():
    cfg = info(build("a>b b>", fall={"a", "b"}))
    assert names(cfg.exits) == ["b"]


def test_guarded_branch_in_last_block_falls_off_end():
    fn = build("a>b b>a")
    fn.blocks[1].instrs[0].guard = Value("pred", "%p", "%p")   # @%p bra a
    assert names(info(fn).exits) == ["b"]


def test_infinite_loop_has_no_exit():
    assert info(build("a>b b>b")).exits == []


def test_report_and_data():
    fn = build("a>b,c b>d c>d d> u>d")
    r = run_pipeline(fn.module, "cfg")["cfg"]
    assert r.text.splitlines() == [
        "cfg @k: 5 blocks, 5 edges, 1 exits",
        "  a [1] -> b, c",
        "  b [1] -> d",
        "  c [1] -> d",
        "  d [1] -> exit",
        "  u [1] -> d",
        "  entry: a",
        "  exits: d",
        "  unreachable: u",
    ]
    assert r.data["k"]["blocks"][3] == {"name": "d", "instrs": 1, "succs": [],
                                        "preds": ["b", "c", "u"]}
    assert r.data["k"]["unreachable"] == ["u"]


def test_dot_is_deterministic_and_complete():
    fn = build("a>b,c b>d c>d d>")
    dot = to_dot(fn.module)
    assert dot == to_dot(fn.module)
    assert dot.startswith("digraph ptxc {") and dot.rstrip().endswith("}")
    assert '"f0_0" [label="a [1]"];' in dot
    assert dot.count("->") == 4 and '"f0_0" -> "f0_2";' in dot
