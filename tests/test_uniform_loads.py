"""Loads at a variable's address (``ld.shared [s+20]``, ``ld.const
[table+12]``, ``ld.global [gvals+8]``: the same constant in every lane) as one
scalar load and a broadcast (backends/llvm/ops/resolve.uniform_pointer)
against the 32-lane gather they replace (PTXC_UNIFORM_LOADS=0): the same
bytes, counters, memory counters and first fault, with partial warps, lanes
a branch leaves inactive, a vector load and a dynamic shared array read past
its end by some lanes or by none. Kernels: tests/cuda/uniform_loads.cu (nvcc
PTX); the expected buffers follow from its source with numpy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import jit
from switches import each_setting

PTX = Path(__file__).parent / "cuda" / "uniform_loads.sm90.ptx"
TABLE = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
GVALS = np.array([10, 20, 30, 40], np.int32)
SHARED, GLOBAL, DYNAMIC = "_Z14uniform_sharedPiP4int4", "_Z14uniform_globalPii", "_Z15uniform_dynamicPii"


def both(monkeypatch, run):
    """[scalar-load result, gather result] of ``run()`` (a fresh module each)."""
    return each_setting(monkeypatch, "PTXC_UNIFORM_LOADS", ("1", "0"), run)


def launch(kernel, block, args, shared_bytes=0):
    return ptxc.launch(ptxc.load(str(PTX)), kernel, (1,), (block,), args, mode="full",
                       memory_counters=True, shared_bytes=shared_bytes)


def test_switch_changes_code(monkeypatch):
    """The scalar load replaces the gathers (else the tests below prove nothing)."""
    def gathers():
        m = ptxc.load(str(PTX))
        k = next(f for f in m.kernels if f.name == SHARED)
        text = jit.compile_kernel(m, k, "full", 0, keep_ir=True).ir_text
        return sum("call" in line and "masked.gather" in line for line in text.splitlines())
    scalar, gather = both(monkeypatch, gathers)
    assert gather - scalar == 6        # s[5], table[3] and the four words of s4[2]


@pytest.mark.parametrize("block", [32, 45, 96])
def test_shared_and_const_partial_warps(monkeypatch, block):
    """Lanes t % 3 == 0 load s[5] + table[3] and s4[2]; the others keep
    -t and (-1, -2, -3, -4); a block of 45 has a warp of 13 lanes (threads
    0-63 fill s, so s[5] = 5 * 7 + 1 whatever the block)."""
    def go():
        out, out4 = np.zeros(block, np.int32), np.zeros((block, 4), np.int32)
        prof = launch(SHARED, block, [out, out4])
        return out.tobytes() + out4.tobytes(), prof.counters(), prof.memory
    (b1, c1, m1), (b2, c2, m2) = both(monkeypatch, go)
    assert b1 == b2 and c1 == c2 and m1 == m2
    t = np.arange(block)
    reads = t % 3 == 0
    want = np.where(reads, 5 * 7 + 1 + TABLE[3], -t)
    want4 = np.where(reads[:, None], [2, 20, 200, 2001], [-1, -2, -3, -4])
    got = np.frombuffer(b1, np.int32)
    np.testing.assert_array_equal(got[:block], want)
    np.testing.assert_array_equal(got[block:].reshape(block, 4), want4)


@pytest.mark.parametrize("k", [0, 1, 7])
def test_global_and_const_variables(monkeypatch, k):
    def go():
        out = np.zeros(40, np.int32)
        prof = launch(GLOBAL, 40, [out, k])
        return out.tobytes(), prof.counters(), prof.memory
    (b1, c1, m1), (b2, c2, m2) = both(monkeypatch, go)
    assert b1 == b2 and c1 == c2 and m1 == m2
    want = GVALS[2] + (TABLE[k] if k in (1, 7) else 0)
    np.testing.assert_array_equal(np.frombuffer(b1, np.int32), [want] * 40)


@pytest.mark.parametrize("shared_bytes, lanes", [(256, 40), (160, 0), (160, 40), (160, 33), (0, 0)])
def test_dynamic_shared_past_the_end(monkeypatch, shared_bytes, lanes):
    """dyn[40] is bytes 160-163: in bounds with 256 dynamic bytes; with 160
    (or none) it is past the end, which stops the launch at the first lane
    that reads it (thread 0: warp 0 runs first) and never when no lane
    reads it (lanes = 0: the scalar load must not touch the bytes either)."""
    def go():
        out = np.full(40, 9, np.int32)
        try:
            prof = launch(DYNAMIC, 40, [out, lanes], shared_bytes)
            return None, out.tobytes(), prof.counters()
        except ptxc.PtxcError as e:
            return str(e), out.tobytes(), None
    (e1, b1, c1), (e2, b2, c2) = both(monkeypatch, go)
    assert e1 == e2 and b1 == b2 and c1 == c2
    if shared_bytes >= 164 or lanes == 0:
        assert e1 is None
        got = np.frombuffer(b1, np.int32)
        np.testing.assert_array_equal(got[lanes:], [-5] * (40 - lanes))
    else:
        assert "thread (0,0,0)" in e1 and "out-of-bounds" in e1 and "offset 160" in e1
