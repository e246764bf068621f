"""The out-of-line lane-shape test of backends/llvm/ops/outlined.py and the
scalar check of a variable's address (resolve.uniform_check) against the
inline code they replace (PTXC_INLINE_SHAPES=1): the
same bytes, counters, memory counters and first fault (thread, kind,
address). Kernels: tests/cuda/outlined_checks.cu and fast_access.cu (nvcc
PTX); expected buffers are computed with numpy from the source."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import jit
from switches import each_setting

HERE = Path(__file__).parent / "cuda"
PTX = HERE / "outlined_checks.sm90.ptx"
FAST = HERE / "fast_access.sm90.ptx"


def both(monkeypatch, run):
    """[outlined result, inline result] of ``run()`` (a fresh module each)."""
    return each_setting(monkeypatch, "PTXC_INLINE_SHAPES", ("0", "1"), run)


def launch(kernel, grid, block, args, path=PTX):
    return ptxc.launch(ptxc.load(str(path)), kernel, grid, block, args, mode="full",
                       memory_counters=True)


def test_switch_changes_code(monkeypatch):
    """The two settings compile different code (else the tests below prove nothing)."""
    def text():
        m = ptxc.load(str(PTX))
        return jit.compile_kernel(m, m.kernels[0], "full", 0, keep_ir=True).ir_text
    outl, inl = both(monkeypatch, text)
    assert "call preserve_allcc void @ptxc_shapes4_" in outl and "@ptxc_shapes" not in inl


def test_shared_stores_same_bytes_and_counters(monkeypatch):
    grid, block = 2, 64

    def run():
        out = np.zeros(grid * block, np.int32)
        prof = launch("shared_at", (grid,), (block,), [out, 1, 0])
        return out, prof
    (o1, p1), (o2, p2) = both(monkeypatch, run)
    t = np.arange(block)
    np.testing.assert_array_equal(o1, np.tile(3 * ((5 * t) & 63) + 1, grid))
    assert o1.tobytes() == o2.tobytes()
    assert p1.counters() == p2.counters() and p1.memory == p2.memory


# shared_at(out, stride, byte_off): the first faulting thread and kind, derived by hand
SHARED_AT_FAULTS = [
    (2, 0, 64, 32, "out-of-bounds"),      # lane 32 of warp 1 writes byte 256 of 256
    (1, 2, 32, 0, "misaligned"),          # every lane misaligned, all in bounds
    (3, 2, 32, 21, "out-of-bounds"),      # misaligned everywhere; lane 21 (byte 254) also out of bounds
]


@pytest.mark.parametrize("stride,off,block,thread,kind", SHARED_AT_FAULTS)
def test_shared_first_fault_is_the_same(monkeypatch, stride, off, block, thread, kind):
    def run():
        out = np.full(block, 7, np.int32)
        with pytest.raises(ptxc.PtxcError) as e:
            launch("shared_at", (1,), (block,), [out, stride, off])
        return str(e.value), out.tobytes()
    (m1, b1), (m2, b2) = both(monkeypatch, run)
    assert m1 == m2 and b1 == b2
    assert f"thread ({thread},0,0)" in m1 and kind in m1


def test_fast_path_tiles_same(monkeypatch):
    ctas = 3
    inp = np.arange(64 * ctas, dtype=np.int32) * 3 - 50

    def run():
        args = [inp.copy(), np.zeros(64 * ctas, np.int32), np.full(ctas, -1, np.int32)]
        prof = launch("tiles", (ctas,), (64,), args, FAST)
        return args, prof
    (a1, p1), (a2, p2) = both(monkeypatch, run)
    tile = inp.reshape(ctas, 64)
    t = np.arange(64)
    want = sum(tile[:, k:k + 1] * tile[:, (t + k) & 63] for k in range(0, 64, 8)) + tile[:, 63 - t]
    np.testing.assert_array_equal(a1[1].reshape(ctas, 64), want)
    assert a1[1].tobytes() == a2[1].tobytes() and a1[2].tobytes() == a2[2].tobytes()
    assert p1.counters() == p2.counters() and p1.memory == p2.memory


def test_variable_address_scalar_check(monkeypatch):
    """A variable's address (every lane the same constant): the scalar check
    gives the inline per-lane check's bytes and first faults."""
    def run(which):
        def go():
            out = np.full(64, 7, np.int32)
            try:
                launch("_Z12shared_fixedPii", (1,), (64,), [out, which])
                return None, out.tobytes()
            except ptxc.PtxcError as e:
                return str(e), out.tobytes()
        return both(monkeypatch, go)
    (m1, b1), (m2, b2) = run(0)
    assert m1 is None and m2 is None and b1 == b2
    np.testing.assert_array_equal(np.frombuffer(b1, np.int32), [10] * 64)
    for which, kind, offset in ((1, "out-of-bounds", "offset 280"), (2, "misaligned", "")):
        (m1, b1), (m2, b2) = run(which)
        assert m1 == m2 and b1 == b2
        assert "thread (0,0,0)" in m1 and kind in m1 and offset in m1
