"""Compile-cost machinery of the JIT (backends/llvm/jit.py, objcache.py):
identical kernel code compiled once per batch, object code cached on disk per
kernel (an edited kernel is the only one compiled again), and the counters of
a launch the same whether its code came from LLVM or from the cache."""
from __future__ import annotations

from pathlib import Path

import pytest

import ptxc
from corpus import CORPUS
from ptxc.backends.llvm import jit
from ptxc.launcher.compile import ensure_slice

HERE = Path(__file__).resolve().parent
INFER_PTX = HERE / "cuda" / "launch_infer.sm90.ptx"
XLA = CORPUS / "xla" / "module_0000.ptx"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXC_CACHE", "1")
    monkeypatch.setenv("PTXC_CACHE_DIR", str(tmp_path / "objects"))
    return tmp_path / "objects"


def compile_all(text: str, name: str = "k.ptx"):
    m = ptxc.parse(text, name)
    ensure_slice(m, m.kernels[0])
    return m, jit.compile_many(m, m.kernels, "hybrid", 0)


def scale_lt_counters(m):
    # no buffers: the branch slice alone (fault checks would need them)
    return ptxc.launch(m, "scale_lt", 8, 128, {}, mode="hybrid", check_faults=False).counters()


def test_object_cache_is_per_kernel(cache_dir):
    text = INFER_PTX.read_text()
    m1, first = compile_all(text)
    assert first[0].timings["compiled"] == first[0].timings["distinct"] == 9
    m2, again = compile_all(text)
    assert again[0].timings["compiled"] == 0          # every kernel found on disk
    # scale_lt's bound 999 -> 998: that kernel alone is compiled again.
    edited = text.replace("setp.gt.u32 \t%p1, %r1, 999;", "setp.gt.u32 \t%p1, %r1, 998;", 1)
    assert edited != text
    m3, after = compile_all(edited)
    assert after[0].timings["compiled"] == 1
    assert scale_lt_counters(m1) == scale_lt_counters(m2)
    assert scale_lt_counters(m3)["thread_inst_executed"] == 1024 * 8 + 999 * 8 + 1024


def test_cache_off_writes_nothing(cache_dir, monkeypatch):
    monkeypatch.setenv("PTXC_CACHE", "0")
    _, cs = compile_all(INFER_PTX.read_text())
    assert cs[0].timings["compiled"] == 9 and not cache_dir.exists()


@pytest.mark.skipif(not XLA.exists(), reason=f"XLA corpus module not found at {XLA}")
def test_identical_kernels_share_one_function(monkeypatch):
    """copy_58, copy_59 and copy_60 of the XLA module are the same kernel
    (index 512*ctaid + 4*tid < 16384, the same copy) under three names."""
    monkeypatch.setenv("PTXC_CACHE", "0")
    m = ptxc.load(str(XLA))
    ensure_slice(m, m.kernels[0])
    kernels = [m.function(n) for n in ("copy_58", "copy_59", "copy_60")]
    cs = jit.compile_many(m, kernels, "hybrid", 0)
    assert cs[0].timings["distinct"] == 1 and cs[0].timings["compiled"] == 1
    assert len({c.warp_fn for c in cs}) == 1
    assert len({id(c.plan) for c in cs}) == 3        # each keeps its own plan


def test_functions_over_the_ir_bound_compile_at_level_0(monkeypatch):
    """jit._levels: O2 is asked for, but a run_warp function longer than
    O2_MAX_IR_LINES lines of IR is compiled at level 0 (LLVM's O2 time grows
    much faster than linearly with one function's size: docs/executor.md)."""
    monkeypatch.setenv("PTXC_CACHE", "0")
    levels = []
    real_emit = jit._emit
    monkeypatch.setattr(jit, "_emit", lambda text, level, names:
                        levels.append(level) or real_emit(text, level, names))
    text = INFER_PTX.read_text()
    m = ptxc.parse(text, "k.ptx")
    gens = jit._generate(m, m.kernels[:2], "full", 2, False, 0)
    sizes = sorted(t.count("\n") for _, _, t in gens)
    monkeypatch.setattr(jit, "O2_MAX_IR_LINES", (sizes[0] + sizes[1]) // 2)
    assert sizes[0] < sizes[1]
    small, big = sorted(gens, key=lambda g: g[2].count("\n"))
    jit.compile_many(m, [small[0], big[0]], "full", 2)
    assert sorted(levels) == [0, 2]
    levels.clear()
    monkeypatch.setattr(jit, "O2_MAX_IR_LINES", 10 ** 9)
    jit.compile_many(ptxc.parse(text, "k.ptx"), [small[0]], "full", 2)
    assert levels == [2]
