"""The memory counters' closed forms (backends/llvm/instruments/memcount_fast.py)
against their general computation (PTXC_FAST_COUNT=0, memcount_ir.py alone):
contiguous, uniform, half-uniform, strided, descending, scattered and masked
warp accesses of shared (4- and 8-byte lanes, 4- and 8-byte banks) and
global memory give the same counters both ways, and the counts derived by
hand below from docs/metrics.md ("Memory access counters"). Kernels:
tests/cuda/memcount_shapes.cu (nvcc PTX); outputs are checked with numpy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc

PTX = Path(__file__).parent / "cuda" / "memcount_shapes.sm90.ptx"
T = np.arange(64)                                   # two warps: one CTA of 64 threads


def launch_both(monkeypatch, kernel, grid, block, make_args, bank_bytes=4):
    """[(profile, args)] with the closed forms on, then off; a fresh module
    and no object cache each (the helpers differ)."""
    out = []
    for flag in ("1", "0"):
        monkeypatch.setenv("PTXC_FAST_COUNT", flag)
        monkeypatch.setenv("PTXC_CACHE", "0")
        args = make_args()
        prof = ptxc.launch(ptxc.load(str(PTX)), kernel, grid, block, args, mode="full",
                           memory_counters=True, bank_bytes=bank_bytes)
        out.append((prof, args))
    (fast, _), (slow, _) = out
    assert fast.memory == slow.memory
    assert fast.per_memory_instr == slow.per_memory_instr
    assert fast.counters() == slow.counters()
    return out


def scattered():
    """Warp 0: bank l // 4 holds the 4 words (l % 4) * 32 + l // 4, in no
    lane order (4 transactions); warp 1: every lane in bank 0, 32 words in
    descending order (32)."""
    l = np.arange(32)
    return np.concatenate([(l % 4) * 32 + l // 4, (31 - l) * 64])


# (name, idx, executing lanes, shared transactions of the two warps: 4-byte lanes and banks)
SHARED = [
    ("contiguous", T, None, 2),                                 # words 0-31, 32-63
    ("uniform", np.full(64, 5), None, 2),                       # one word: broadcast
    ("half_uniform", (T >> 4) * 16 + 3, None, 2),               # words 3 and 19: two banks
    ("halves_same", T & 15, None, 2),                           # matrixMul's tile[k][tx]
    ("stride2", 2 * T, None, 4),                                # each even bank twice
    ("stride32", (32 * T) % 2048, None, 64),                    # 32 words in bank 0
    ("descending", 2047 - T, None, 2),
    ("descending2", 2000 - 2 * T, None, 4),
    ("scattered", scattered(), None, 4 + 32),
    ("masked", (32 * T) % 2048, T % 3 == 0, 22),                # 11 lanes per warp in bank 0
]


@pytest.mark.parametrize("name,idx,on,tx", SHARED, ids=[s[0] for s in SHARED])
def test_shared_bank_counts(monkeypatch, name, idx, on, tx):
    on = np.ones(64, bool) if on is None else on
    make = lambda: [idx.astype(np.int32), on.astype(np.int32), np.zeros(64, np.float32)]  # noqa: E731
    for prof, args in launch_both(monkeypatch, "gather_shared", (1,), (64,), make):
        np.testing.assert_array_equal(args[2], np.where(on, idx, 0).astype(np.float32))
        m = prof.memory
        assert m["shared_load_requests"] == 2
        assert m["shared_load_transactions"] == tx
        assert m["shared_load_requested_bytes"] == 4 * int(on.sum())


# (idx, transactions with 4-byte banks: two phases of 16 lanes; with 8-byte banks: one phase)
SHARED8 = [(T, 4, 2),                   # each phase 32 words / 16 doubles in distinct banks
           (2 * T, 8, 4),               # a phase's 16 doubles span 64 words: two per bank
           (1023 - T, 4, 2),
           (np.full(64, 9), 4, 2)]      # one double: both its words, broadcast


@pytest.mark.parametrize("idx,tx4,tx8", SHARED8, ids=["contiguous", "stride2", "descending", "uniform"])
def test_shared_double_lanes(monkeypatch, idx, tx4, tx8):
    make = lambda: [idx.astype(np.int32), np.zeros(64, np.float64)]     # noqa: E731
    for bank, tx in ((4, tx4), (8, tx8)):
        for prof, args in launch_both(monkeypatch, "gather_shared2", (1,), (64,), make, bank):
            np.testing.assert_array_equal(args[1], idx.astype(np.float64))
            assert prof.memory["shared_load_requests"] == 2
            assert prof.memory["shared_load_transactions"] == tx


# (name, idx, executing lanes, sectors, lines, histogram {sectors: requests})
GLOBAL = [
    ("contiguous", T, None, 8, 2, {4: 2}),                      # 128 bytes a warp
    ("uniform", np.full(64, 5), None, 2, 2, {1: 2}),
    ("stride8", 8 * T, None, 64, 16, {32: 2}),                  # one 32-byte sector a lane
    ("descending", 1023 - T, None, 8, 2, {4: 2}),
    ("two_rows", (T >> 4) * 1000 + (T & 15), None, 8, 5, {4: 2}),   # bytes 4000-4063: 1 line, 12000-12063: 2
    ("masked", T, T % 2 == 0, 8, 2, {4: 2}),
]


@pytest.mark.parametrize("name,idx,on,sectors,lines,hist", GLOBAL, ids=[g[0] for g in GLOBAL])
def test_global_counts(monkeypatch, name, idx, on, sectors, lines, hist):
    on = np.ones(64, bool) if on is None else on
    src = np.arange(4096, dtype=np.float32)
    make = lambda: [src, idx.astype(np.int32), on.astype(np.int32), np.zeros(64, np.float32)]  # noqa: E731
    for prof, args in launch_both(monkeypatch, "gather_global", (1,), (64,), make):
        np.testing.assert_array_equal(args[3], np.where(on, src[idx], 0))
        m = gathering_load(prof)
        assert m["requests"] == 2
        assert m["transactions"] == sectors and m["lines"] == lines
        assert m["requested_bytes"] == 4 * int(on.sum())
        assert {k + 1: v for k, v in enumerate(m["sectors_hist"]) if v} == hist


def gathering_load(prof) -> dict:
    """The global counters of ``in[idx[t]]``: the only ld.global.f32."""
    got = [v["global"] for v in prof.per_memory_instr.values() if v["opcode"] == "ld.global.f32"]
    assert len(got) == 1
    return got[0]


def test_shapes_in_code(monkeypatch):
    """shared_shapes, one 16 x 16 block (8 warps): per warp the loads take
    1 (tile[ty][k]) + 1 (tile[k][tx]) + 1 (padded column) + 2 (stride 2) + 2
    (descending, stride 2) + 8 (tile[tx][ty]: each half's 16 words fall in
    2 banks, 8 words each) + 1 (tile[2][3], a variable's address) = 16
    transactions; the four stores 1 each."""
    k = 3
    make = lambda: [np.zeros(256, np.float32), k]      # noqa: E731
    t = np.arange(256)
    tx, ty = t % 16, t // 16
    want = (ty * 16 + k) + 2 * (k * 16 + tx) + 4 * t \
        + 8 * (2 * t) + 16 * (511 - 2 * t) + 32 * (tx * 16 + ty) + 64 * (2 * 16 + 3)
    for prof, args in launch_both(monkeypatch, "shared_shapes", (1,), (16, 16), make):
        np.testing.assert_array_equal(args[0], want.astype(np.float32))
        m = prof.memory
        assert m["shared_load_requests"] == 7 * 8 and m["shared_load_transactions"] == 16 * 8
        assert m["shared_store_requests"] == 4 * 8 and m["shared_store_transactions"] == 4 * 8


@pytest.mark.parametrize("w,c_counts", [
    (128, (32, 16, 4)),     # rows 512 bytes apart: 2 sectors and 1 line per half, disjoint
    (8, (24, 12, 3)),       # rows 32 bytes apart overlap: 96 bytes a warp, 1 or 2 lines
])
def test_global_shapes_in_code(monkeypatch, w, c_counts):
    """global_shapes, one 16 x 16 block (8 warps), (sectors, lines,
    sectors per request) per load: in[t] (32, 8, 4), in[k] (8, 8, 1),
    in[ty * w + tx] (``c_counts``), in[1023 - t] (32, 8, 4), in[8 * t]
    (256, 64, 32), the variable ``scale`` (8, 8, 1); the store out[t]
    (32, 8, 4)."""
    k = 5
    src = np.arange(4096, dtype=np.float32)
    make = lambda: [src, np.zeros(256, np.float32), w, k]      # noqa: E731
    t = np.arange(256)
    tx, ty = t % 16, t // 16
    want = src[t] + 2 * src[k] + 4 * src[ty * w + tx] + 8 * src[1023 - t] + 16 * src[8 * t] + 3
    expected = sorted([(32, 8, 4), (8, 8, 1), c_counts, (32, 8, 4), (256, 64, 32), (8, 8, 1)])
    for prof, args in launch_both(monkeypatch, "global_shapes", (1,), (16, 16), make):
        np.testing.assert_array_equal(args[1], want.astype(np.float32))
        loads = [v["global"] for v in prof.per_memory_instr.values() if v["opcode"] == "ld.global.f32"]
        got = []
        for g in loads:
            assert g["requests"] == 8 and g["requested_bytes"] == 8 * 32 * 4
            hist = [i + 1 for i, v in enumerate(g["sectors_hist"]) if v]
            if g["transactions"] == 24:      # w = 8: every warp 3 sectors
                assert g["sectors_hist"][2] == 8
            got.append((g["transactions"], g["lines"], hist[0] if len(hist) == 1 else hist))
        assert sorted(got) == expected
        assert prof.memory["gst_transactions"] == 32 and prof.memory["gst_lines"] == 8
