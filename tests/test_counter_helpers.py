"""The memory counters' helpers and level-0 code's ptxc_resolve in the
helper library (backends/llvm/helper_lib.py: compiled once per process and
level, at the kernel's level) against the same helpers inside each kernel's
module (PTXC_HELPERS_APART=0,
the code before): the same memory counters, per-instruction counters,
counters and bytes at level 0 and O2, for shared (4- and 8-byte lanes and
banks), global and atomic accesses; and the warm-up's compile of the common
helpers (jit.precompile_helpers) is the object a kernel then uses.
Kernels: tests/cuda/memcount_shapes.cu and atomics.cu (nvcc PTX); outputs
are checked with numpy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import helper_lib, jit
from compile_probe import emitted_names

HERE = Path(__file__).parent / "cuda"
SHAPES = HERE / "memcount_shapes.sm90.ptx"
T = np.arange(64)


def both(monkeypatch, level: str, run):
    """[helpers apart, helpers in the kernel's module] of ``run()``."""
    monkeypatch.setattr(jit, "ENV_LEVEL", level)
    monkeypatch.setenv("PTXC_CACHE", "0")
    out = []
    for flag in ("1", "0"):
        monkeypatch.setenv("PTXC_HELPERS_APART", flag)
        out.append(run())
    return out


def counted(kernel, args, bank_bytes=4, path=SHAPES):
    prof = ptxc.launch(ptxc.load(str(path)), kernel, (1,), (64,), args, mode="full",
                       memory_counters=True, bank_bytes=bank_bytes)
    return prof.memory, prof.per_memory_instr, prof.counters(), [a.tobytes() for a in args
                                                                 if isinstance(a, np.ndarray)]


def scattered():
    l = np.arange(32)
    return np.concatenate([(l % 4) * 32 + l // 4, (31 - l) * 64]).astype(np.int32)


@pytest.mark.parametrize("level", ["0", "2"])
@pytest.mark.parametrize("idx", [T, scattered(), (32 * T) % 2048], ids=["contiguous", "scattered", "stride32"])
def test_shared_and_global_same_counters(monkeypatch, level, idx):
    on = (T % 3 != 1).astype(np.int32)             # lanes out: the general helpers' masks
    src = np.arange(4096, dtype=np.float32)
    idx = idx.astype(np.int32)

    def run():
        return [counted("gather_shared", [idx, on, np.zeros(64, np.float32)]),
                counted("gather_shared2", [idx % 1024, np.zeros(64, np.float64)], bank_bytes=8),
                counted("gather_global", [src, idx, on, np.zeros(64, np.float32)])]
    apart, inside = both(monkeypatch, level, run)
    assert apart == inside
    # two warps: s[idx[t]] one shared load each; on[t], idx[t], in[idx[t]] three global loads
    assert apart[0][0]["shared_load_requests"] == 2 and apart[2][0]["gld_requests"] == 6


@pytest.mark.parametrize("level", ["0", "2"])
def test_atomics_same_counters(monkeypatch, level):
    """atomics.cu's atom_hist: shared and global atomicAdd, a float add and
    a max; numpy gives the histogram, the sum and the max."""
    src = (T * 37 % 50).astype(np.int32)

    def run():
        args = [src, np.zeros(8, np.int32), np.zeros(1, np.float32), np.zeros(1, np.int32)]
        prof = ptxc.launch(ptxc.load(str(HERE / "atomics.sm90.ptx")), "atom_hist", (1,), (64,), args,
                           mode="full", memory_counters=True)
        return prof.memory, prof.per_memory_instr, prof.counters(), [a.tobytes() for a in args]
    apart, inside = both(monkeypatch, level, run)
    assert apart == inside
    hist, fsum, gmax = (np.frombuffer(b, d) for b, d in zip(apart[3][1:], (np.int32, np.float32, np.int32)))
    np.testing.assert_array_equal(hist, np.bincount(src & 7, minlength=8))
    assert fsum[0] == float(src.sum()) and gmax[0] == src.max()
    assert apart[0]["global_atomic_requests"] > 0 and apart[0]["shared_atomic_requests"] > 0


def test_switch_changes_code(monkeypatch):
    """Apart, the kernel's module declares the helpers it calls and defines
    none (else the tests above compare the same code)."""
    monkeypatch.setenv("PTXC_CACHE", "0")
    texts = []
    for flag in ("1", "0"):
        monkeypatch.setenv("PTXC_HELPERS_APART", flag)
        m = ptxc.load(str(SHAPES))
        k = next(f for f in m.kernels if f.name == "gather_global")
        texts.append(jit.compile_kernel(m, k, "full", 0, memory=4, keep_ir=True).ir_text)
    assert "define internal void @ptxc_mem_global" not in texts[0]
    assert "declare void @ptxc_mem_global" in texts[0]
    assert "define internal i64 @ptxc_resolve" not in texts[0]
    assert "define internal void @ptxc_mem_global" in texts[1]
    assert "define internal i64 @ptxc_resolve" in texts[1]


def test_optimised_code_keeps_its_resolve(monkeypatch):
    """O2 code defines ptxc_resolve in its module (to inline it)."""
    monkeypatch.setenv("PTXC_CACHE", "0")
    m = ptxc.load(str(SHAPES))
    k = next(f for f in m.kernels if f.name == "gather_global")
    text = jit.compile_kernel(m, k, "full", 2, keep_ir=True).ir_text
    assert "define internal i64 @ptxc_resolve" in text


def test_precompiled_helpers_are_the_ones_kernels_use(monkeypatch):
    """After jit.precompile_helpers, compiling kernels whose accesses are a
    global one and a 4-byte shared one compiles none of those helpers again:
    mem_count.common_helpers and fast_access.define_shapes build the very
    texts count_access and the fast path do."""
    monkeypatch.setenv("PTXC_HELPERS_APART", "1")
    monkeypatch.setattr(jit, "ENV_LEVEL", None)
    emitted = emitted_names(monkeypatch)
    jit.precompile_helpers(4)
    early = list(emitted)
    # global, shared 4-byte, their closed forms, ptxc_resolve, the 4-byte shape test
    assert len(helper_lib._objs) == 6 and "ptxc_shapes4" in early
    m = ptxc.load(str(SHAPES))
    for name in ("gather_global", "gather_shared"):
        jit.compile_kernel(m, next(f for f in m.kernels if f.name == name), "full", 0, memory=4)
    assert emitted[len(early):] and not set(emitted[len(early):]) & set(early)


def test_precompile_stops_when_a_kernel_compile_begins(monkeypatch):
    """The warm-up's helper compiles end once the application's first kernel
    compile has begun (jit.kernel_compiles changed): here the stop turns
    true after ptxc_resolve, the first, so that one alone is compiled; and a
    kernel compile does count."""
    monkeypatch.setenv("PTXC_CACHE", "0")
    monkeypatch.setenv("PTXC_HELPERS_APART", "1")
    monkeypatch.setattr(jit, "ENV_LEVEL", None)
    monkeypatch.setattr(helper_lib, "_objs", {})
    asked = []
    jit.precompile_helpers(4, stop=lambda: asked.append(1) or len(asked) > 1)
    assert len(asked) == 2 and len(helper_lib._objs) == 1
    before = jit.kernel_compiles()
    m = ptxc.load(str(SHAPES))
    jit.compile_kernel(m, m.kernels[0], "full", 0)
    assert jit.kernel_compiles() > before
