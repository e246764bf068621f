"""Every CFG analysis and the verifier over every corpus file that parses.

The corpus lives beside the repository (../shared/corpus) and is never copied
into it; without it these tests are skipped. Files the parser rejects are
skipped too (parser coverage is tested elsewhere), and so are files over
1 MB unless PTXC_CORPUS_FULL=1 (parsing them takes most of a minute). Besides "does not crash",
each function is checked against the defining properties: the dominator tree
has the parent property (for every edge u -> v, idom(v) dominates u) and
matches networkx on small functions; every reconvergence point post-dominates
its branch; every loop header dominates its latches and body.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import ptxc
from ptxc.passes.cfg import CFG, defined_functions
from ptxc.passes.controldep import ControlDep
from ptxc.passes.domtree import DomTree
from ptxc.passes.loops import Loops
from ptxc.passes.postdomtree import PostDomTree
from ptxc.passes.reconvergence import Reconvergence
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.verifier import verify_function

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
FILES = sorted(CORPUS.rglob("*.ptx")) if CORPUS.is_dir() else []
NX_LIMIT = 40      # blocks; networkx cross-check only up to this size
BIG = 1 << 20      # bytes; larger files only with PTXC_CORPUS_FULL=1

pytestmark = pytest.mark.skipif(not FILES, reason=f"PTX corpus not found at {CORPUS}")


def _load(path: Path):
    if path.stat().st_size > BIG and os.environ.get("PTXC_CORPUS_FULL") != "1":
        pytest.skip("over 1 MB; set PTXC_CORPUS_FULL=1 to include it")
    try:
        return ptxc.load(str(path))
    except ptxc.PtxcError as e:
        pytest.skip(f"parser rejects it: {e.headline()[:160]}")


def _check_dominators(fn, am) -> None:
    cfg, dom = am.get(CFG, fn), am.get(DomTree, fn)
    for u, v in cfg.edges:
        if dom.is_reachable(u) and v is not cfg.entry:
            assert dom.dominates(dom.idom[v], u), (fn.name, u.name, v.name)
    if len(cfg.blocks) <= NX_LIMIT:
        from cfgutil import nx_idoms
        expected = nx_idoms(cfg.succ_idx, 0)
        got = {b.index: dom.idom[b].index for b in cfg.reachable if b is not cfg.entry}
        assert got == expected, fn.name


def _check_postdom(fn, am) -> None:
    cfg, pdt = am.get(CFG, fn), am.get(PostDomTree, fn)
    for u, v in cfg.edges:
        assert pdt.postdominates(pdt.ipdom(u), v), (fn.name, u.name, v.name)
    for ins, point in am.get(Reconvergence, fn).points.items():
        assert pdt.postdominates(point, ins.block)


def _check_loops(fn, am) -> None:
    dom = am.get(DomTree, fn)
    for loop in am.get(Loops, fn).loops:
        assert all(dom.dominates(loop.header, b) for b in loop.blocks), fn.name
        assert all(t in loop.blocks for t in loop.latches)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_analyses_on_corpus_file(path):
    module = _load(path)
    am = AnalysisManager(module)
    for fn in defined_functions(module):
        verify_function(fn)
        _check_dominators(fn, am)
        _check_postdom(fn, am)
        _check_loops(fn, am)
        am.get(ControlDep, fn)
