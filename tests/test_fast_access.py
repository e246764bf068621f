"""The memory fast path (backends/llvm/ops/fast_access.py) against the
per-lane path (PTXC_FAST_MEM=0; =global leaves .shared and .const per lane;
=always ignores the lane-stride hint): the same bytes, counters, memory counters
and first fault, on contiguous, uniform, strided, masked, vector and shared
accesses (tests/cuda/fast_access.cu, nvcc PTX). Expected buffers are computed
with numpy from the kernels' source."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc

PTX = Path(__file__).parent / "cuda" / "fast_access.sm90.ptx"


def run_both(monkeypatch, kernel, grid, block, make_args, **kw):
    """[(profile, args)] with the fast path on (the default), on for every
    access whatever the lane-stride hint, on for .global and generic
    accesses only, then off (the last); a fresh module each (compiled kernels are
    cached per module)."""
    out = []
    for flag in ("1", "always", "global", "0"):
        monkeypatch.setenv("PTXC_FAST_MEM", flag)
        monkeypatch.setenv("PTXC_CACHE", "0")
        args = make_args()
        prof = ptxc.launch(ptxc.load(str(PTX)), kernel, grid, block, args, mode="full",
                           memory_counters=True, **kw)
        out.append((prof, args))
    return out


def same_profiles(a, b):
    assert a.counters() == b.counters()
    assert a.memory == b.memory


def same_runs(runs, *bufs):
    """Every setting's buffers ``bufs`` (argument indices) and profiles equal
    the per-lane run's (the last)."""
    slow, sargs = runs[-1]
    for prof, args in runs[:-1]:
        for b in bufs:
            assert args[b].tobytes() == sargs[b].tobytes()
        same_profiles(prof, slow)


@pytest.mark.parametrize("n,stride", [(1000, 3), (64, 1), (37, 7)])
def test_shapes_same_bytes_and_counters(monkeypatch, n, stride):
    rng = np.random.default_rng(n)
    inp = rng.random(n).astype(np.float32)
    make = lambda: [inp.copy(), np.zeros(n + n // 5 + 1, np.float32), n, stride]   # noqa: E731
    runs = run_both(monkeypatch, "shapes", ((n + 127) // 128,), (128,), make)
    (fast, fa) = runs[0]
    i = np.arange(n)
    d = np.where(i & 3, inp[n - 1 - i], 0).astype(np.float32)
    want = np.zeros(n + n // 5 + 1, np.float32)
    want[:n] = inp + np.float32(2) * inp[0] + np.float32(4) * inp[(i * stride) % n] + np.float32(8) * d
    want[n + i[i % 5 == 0] // 5] = inp[i % 5 == 0]
    np.testing.assert_allclose(fa[1], want, rtol=1e-6)
    same_runs(runs, 1)
    assert fast.counters()["thread_inst_executed"] > 0


def test_vectors_same_bytes_and_counters(monkeypatch):
    n = 100
    rng = np.random.default_rng(1)
    v4, v2 = rng.random(4 * n).astype(np.float32), rng.random(2 * n).astype(np.float32)
    make = lambda: [v4.copy(), np.zeros(4 * n, np.float32), v2.copy(), np.zeros(2 * n, np.float32), n]  # noqa: E731
    runs = run_both(monkeypatch, "vectors", (2,), (64,), make)
    fa = runs[0][1]
    np.testing.assert_array_equal(fa[1].reshape(n, 4), v4.reshape(n, 4)[:, ::-1])
    u = v2.reshape(n, 2)[::-1]
    np.testing.assert_allclose(fa[3].reshape(n, 2), np.stack([u[:, 1] + v2[0], u[:, 0]], 1), rtol=1e-6)
    same_runs(runs, 1, 3)


def test_shared_tiles_and_uniform_store(monkeypatch):
    ctas = 3
    inp = np.arange(64 * ctas, dtype=np.int32) * 3 - 50
    make = lambda: [inp.copy(), np.zeros(64 * ctas, np.int32), np.full(ctas, -1, np.int32)]  # noqa: E731
    runs = run_both(monkeypatch, "tiles", (ctas,), (64,), make)
    fa = runs[0][1]
    tile = inp.reshape(ctas, 64)
    t = np.arange(64)
    want = sum(tile[:, k:k + 1] * tile[:, (t + k) & 63] for k in range(0, 64, 8)) + tile[:, 63 - t]
    np.testing.assert_array_equal(fa[1].reshape(ctas, 64), want)
    # each warp stores its last lane (31, 63); warps run in order: warp 1 last
    np.testing.assert_array_equal(fa[2], [63] * ctas)
    same_runs(runs, 1, 2)


@pytest.mark.parametrize("n", [65, 64 + 32])
def test_first_fault_at_last_lane_is_the_same(monkeypatch, n):
    """A buffer of 64 ints read for n > 64: the first out-of-bounds lane is
    lane 0 (n=65) or 0..31 of the third warp; both paths name the same thread
    and address, and leave the same bytes behind."""
    msgs, outs = [], []
    for flag in ("1", "always", "global", "0"):
        monkeypatch.setenv("PTXC_FAST_MEM", flag)
        monkeypatch.setenv("PTXC_CACHE", "0")
        out = np.zeros(128, np.int32)
        with pytest.raises(ptxc.PtxcError) as e:
            ptxc.launch(ptxc.load(str(PTX)), "copy_n", (1,), (128,),
                        [np.arange(64, dtype=np.int32), out, n], mode="full")
        msgs.append(str(e.value))
        outs.append(out.tobytes())
    assert all(m == msgs[-1] for m in msgs)
    assert "thread (64,0,0)" in msgs[0]
    assert all(o == outs[-1] for o in outs)
    np.testing.assert_array_equal(np.frombuffer(outs[0], np.int32)[:64], np.arange(1, 65))


def test_fast_path_taken_and_switch_changes_code(monkeypatch):
    """The switch really selects different code (the test above would pass
    trivially if both runs took the same path)."""
    from ptxc.backends.llvm import jit
    texts = []
    for flag in ("1", "0", "global"):
        monkeypatch.setenv("PTXC_FAST_MEM", flag)
        m = ptxc.load(str(PTX))
        k = next(f for f in m.kernels if f.name == "copy_n")
        texts.append(jit.compile_kernel(m, k, "full", 0, keep_ir=True).ir_text)
    assert "llvm.masked.load" in texts[0] and "llvm.masked.store" in texts[0]
    assert "llvm.masked.load" not in texts[1] and "llvm.masked.store" not in texts[1]
    tiles = []
    for flag in ("global", "1"):
        monkeypatch.setenv("PTXC_FAST_MEM", flag)
        m = ptxc.load(str(PTX))
        k = next(f for f in m.kernels if f.name == "tiles")
        tiles.append(jit.compile_kernel(m, k, "full", 0, keep_ir=True).ir_text)
    # st.shared tile[t] (contiguous) has a fast path only with .shared on
    assert tiles[0].count("call void @llvm.masked.store") < tiles[1].count("call void @llvm.masked.store")


@pytest.mark.parametrize("size", [64 + 40, 64 + 39, 64 + 8, 64 + 7, 40])
def test_offsets_from_one_base(monkeypatch, size):
    """Three loads at [%rd], [%rd+32], [%rd+160] share one lane shape
    (fast_access.cached_shapes); each still has its own range test. With
    ``size`` ints in the buffer the first out-of-bounds load (in program
    order: +32, then +0, then +160) and its lane are the same in every
    setting; in bounds the bytes match numpy."""
    n = 64
    inp = np.arange(size, dtype=np.int32) * 7 - 3
    results = []
    for flag in ("1", "always", "global", "0"):
        monkeypatch.setenv("PTXC_FAST_MEM", flag)
        monkeypatch.setenv("PTXC_CACHE", "0")
        out = np.zeros(n, np.int32)
        try:
            prof = ptxc.launch(ptxc.load(str(PTX)), "offsets", (1,), (n,), [inp.copy(), out, n],
                               mode="full", memory_counters=True)
            results.append(("ok", out.tobytes(), prof.counters(), prof.memory))
        except ptxc.PtxcError as e:
            results.append(("fault", out.tobytes(), str(e)))
    assert all(r == results[-1] for r in results)
    if size >= n + 40:
        i = np.arange(n)
        np.testing.assert_array_equal(np.frombuffer(results[0][1], np.int32),
                                      inp[i] + 2 * inp[i + 8] + 3 * inp[i + 40])
    else:
        assert results[0][0] == "fault"
        assert f"thread ({first_fault(size)},0,0)" in results[0][2]


def first_fault(size: int) -> int:
    """The thread of the first out-of-bounds load: warps run one after the
    other, each runs its loads in program order (+8, +0, +40 elements)."""
    for w in (0, 1):
        for off in (8, 0, 40):
            bad = [i for i in range(32 * w, 32 * w + 32) if i + off >= size]
            if bad:
                return bad[0]
    raise AssertionError("no fault")


GROUP_SETTINGS = [("PTXC_FAST_MEM", "1"), ("PTXC_FAST_GROUPS", "0"), ("PTXC_FAST_MEM", "0")]


@pytest.mark.parametrize("shared", [1024, 1020, 400, 384])
def test_shared_group_same_bytes_counters_and_first_fault(monkeypatch, shared):
    """shared_group stores and loads dynamic shared memory at [%r7+128k],
    k = 0..7: one group test per group (fast_groups.py) by default, each
    access's own test with PTXC_FAST_GROUPS=0, per-lane accesses with
    PTXC_FAST_MEM=0. With ``shared`` bytes the first store past the end is
    derived by hand: k = 3 (bytes 384..511) at lane (shared - 384) / 4 for
    400 and 384, k = 7 (bytes 896..1023) at lane 31 for 1020; the error, the
    bytes and the counters are the same in every setting."""
    ctas = 2
    inp = np.arange(ctas * 256, dtype=np.float32) * 0.5 - 7
    results = []
    for var, value in GROUP_SETTINGS:
        monkeypatch.delenv("PTXC_FAST_MEM", raising=False)
        monkeypatch.delenv("PTXC_FAST_GROUPS", raising=False)
        monkeypatch.setenv(var, value)
        monkeypatch.setenv("PTXC_CACHE", "0")
        out = np.zeros(ctas * 32, np.float32)
        try:
            prof = ptxc.launch(ptxc.load(str(PTX)), "shared_group", (ctas,), (32,), [inp, out],
                               mode="full", shared_bytes=shared, memory_counters=True)
            results.append(("ok", out.tobytes(), prof.counters(), prof.memory))
        except ptxc.PtxcError as e:
            results.append(("fault", out.tobytes(), str(e)))
    assert all(r == results[-1] for r in results)
    if shared == 1024:
        tiles = inp.reshape(ctas, 8, 32)
        want = sum(tiles[:, k, :] * np.float32(k + 1) for k in range(8))
        np.testing.assert_allclose(np.frombuffer(results[0][1], np.float32).reshape(ctas, 32), want,
                                   rtol=1e-6)
    else:
        lane = 31 if shared == 1020 else (shared - 384) // 4
        assert results[0][0] == "fault" and f"thread ({lane},0,0)" in results[0][2], results[0]


def test_shared_group_test_is_emitted(monkeypatch):
    """The groups exist (the test above would pass trivially without them):
    16 accesses in two groups branch on a group test, none with the switch off."""
    from ptxc.backends.llvm import jit
    counts = []
    for value in ("1", "0"):
        monkeypatch.setenv("PTXC_FAST_GROUPS", value)
        m = ptxc.load(str(PTX))
        text = jit.compile_kernel(m, m.function("shared_group"), "full", 0, keep_ir=True).ir_text
        counts.append(sum(1 for line in text.splitlines() if line.startswith("fown")))
    assert counts == [16, 0]
