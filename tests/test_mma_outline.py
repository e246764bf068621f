"""The out-of-line lowering of the warp-level matrix instructions
(backends/llvm/ops/mma_outline.py: one helper per form, compiled at O2 by
helper_lib.py; mma_memory.py: wmma.load/store through a pointer buffer and
lane loops for 8/16-bit elements) on big unrolled kernels.

Kernels: tests/cuda/tc_kernels.cu (``nvcc -ptx -arch=sm_90 -O3 tc_kernels.cu
-o tc_kernels.sm90.ptx``): one warp per block computes 2 x 2 wmma tiles of
C = A B with the k loop fully unrolled (A row-major, B given n-major), for
f16 (m16n16k16), bf16, s8 (s32 accumulators), tf32 (m16n16k8) and f64
(m8n8k4); ``ldmatrix`` + ``mma.sync`` m16n8k16 through shared memory.

* every form against numpy: integer-valued inputs, so every partial sum is
  exact and the result does not depend on the order of the additions;
* every form, random floats, against the inline lowering of before the
  helpers (PTXC_MMA_INLINE=1, level-0 code in the kernel): the same bits,
  so the O2 helper rounds exactly as the inline fused multiply-adds;
* faults: an out-of-bounds wmma.store stores nothing and names the first
  lane in element order (hand-derived below), a wmma.load likewise;
* the level-0 stack frame of the unrolled f16 GEMM stays small (the inline
  lowering needed ~48 KiB per wmma.mma).

Partial warps: wmma/mma/ldmatrix are .aligned (PTX ISA 9.7.14), every lane
must execute them; tests/test_tensor_cores.py checks that a partial warp
stops the launch with its lane mask, before any helper is called.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc

PTX = os.path.join(os.path.dirname(__file__), "cuda", "tc_kernels.sm90.ptx")
BF16 = "bf16"


@pytest.fixture()
def mod():
    return ptxc.load(PTX)


def as_dtype(x, dtype):
    if dtype == BF16:      # round to nearest even on the 16 dropped bits
        u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return x.astype(dtype)


def bf16_value(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


# name, input dtype, K, output dtype, tile (rows = cols of a warp's output)
GEMMS = [("wmma_f16_k4", np.float16, 64, np.float32, 32),
         ("wmma_f16_k16", np.float16, 256, np.float32, 32),
         ("wmma_bf16_k16", BF16, 256, np.float32, 32),
         ("wmma_s8_k16", np.int8, 256, np.int32, 32),
         ("wmma_tf32_k16", np.float32, 128, np.float32, 32),
         ("wmma_f64_k16", np.float64, 64, np.float64, 16)]


def run_gemm(mod, name, a, b, out_dtype, tile, grid=(2, 3)):
    M, N = grid[1] * tile, grid[0] * tile
    c = np.full((M, N), 7, out_dtype)
    ptxc.launch(mod, name, grid, 32, [a, b, c, N], mode="full")
    return c


@pytest.mark.parametrize("name,dtype,K,out,tile", GEMMS)
def test_unrolled_gemm_exact_against_numpy(mod, name, dtype, K, out, tile):
    rng = np.random.default_rng(5)
    grid = (2, 3)
    M, N = grid[1] * tile, grid[0] * tile
    lo, hi = (-128, 128) if dtype is np.int8 else (-3, 4)
    a = rng.integers(lo, hi, (M, K))
    b = rng.integers(lo, hi, (N, K))
    c = run_gemm(mod, name, as_dtype(a, dtype), as_dtype(b, dtype), out, tile, grid)
    np.testing.assert_array_equal(c, (a @ b.T).astype(out))


def test_mma_ldmatrix_exact_against_numpy(mod):
    rng = np.random.default_rng(6)
    a = rng.integers(-3, 4, (16, 512))
    bt = rng.integers(-3, 4, (8, 512))
    c = np.zeros((16, 8), np.float32)
    ptxc.launch(mod, "mma_ldmatrix_k32", 1, 32, [a.astype(np.float16), bt.astype(np.float16), c],
                mode="full")
    np.testing.assert_array_equal(c, (a @ bt.T).astype(np.float32))


def random_inputs(dtype, M, N, K, rng):
    if dtype is np.int8:
        return (rng.integers(-128, 128, (M, K)).astype(np.int8),
                rng.integers(-128, 128, (N, K)).astype(np.int8))
    x, y = rng.standard_normal((M, K)), rng.standard_normal((N, K))
    return as_dtype(x, dtype), as_dtype(y, dtype)


@pytest.mark.parametrize("name,dtype,K,out,tile", GEMMS[:1] + GEMMS[2:])
def test_helper_same_bits_as_inline_lowering(monkeypatch, name, dtype, K, out, tile):
    """Random inputs (every rounding matters): the O2 helper and the inline
    level-0 arithmetic of before give the same bits."""
    rng = np.random.default_rng(7)
    a, b = random_inputs(dtype, 3 * tile, 2 * tile, K, rng)
    got = run_gemm(ptxc.load(PTX), name, a, b, out, tile)
    monkeypatch.setenv("PTXC_MMA_INLINE", "1")
    want = run_gemm(ptxc.load(PTX), name, a, b, out, tile)     # a fresh module compiles again
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert np.isfinite(got.astype(np.float64)).all() and (got != 7).all()


def test_ldmatrix_mma_same_bits_as_inline_lowering(monkeypatch):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((16, 512)).astype(np.float16)
    bt = rng.standard_normal((8, 512)).astype(np.float16)
    outs = []
    for inline in ("0", "1"):
        monkeypatch.setenv("PTXC_MMA_INLINE", inline)
        c = np.zeros((16, 8), np.float32)
        ptxc.launch(ptxc.load(PTX), "mma_ldmatrix_k32", 1, 32, [a, bt, c], mode="full")
        outs.append(c)
    np.testing.assert_array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))


def test_out_of_bounds_store_stores_nothing(mod):
    """C holds 10 rows of 32 floats; the warp's first wmma.store (tile rows
    0-15, ldc 32) checks every element position before storing: the first
    outside is element 2 (rows g + 8 of the m16n8 accumulator layout), whose
    first lane with row 10 is lane 8 (g = 2) at byte 10 * 32 * 4 = 1280."""
    a = np.ones((32, 64), np.float16)
    c = np.full(32 * 10, -7.0, np.float32)
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(mod, "wmma_f16_k4", 1, 32, [a, a.copy(), c, 32], mode="full")
    msg = str(e.value)
    assert "thread (8,0,0): out-of-bounds access" in msg and "wmma.store.d" in msg
    assert "right after the end of buffer of parameter wmma_f16_k4_param_2 (1280 bytes" in msg
    assert (c == -7.0).all()


def test_out_of_bounds_load_names_first_lane(mod):
    """A holds 20 rows; the second A tile (rows 16-31) first leaves it at
    element 0 (row 16 + g, column 2t) in lane 16 (g = 4: row 20)."""
    a = np.ones((20, 64), np.float16)
    b = np.ones((32, 64), np.float16)
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(mod, "wmma_f16_k4", 1, 32, [a, b, np.zeros((32, 32), np.float32), 32], mode="full")
    msg = str(e.value)
    assert "thread (16,0,0): out-of-bounds access" in msg and "wmma.load.a" in msg
    assert "parameter wmma_f16_k4_param_0 (2560 bytes" in msg


def test_frame_of_unrolled_gemm_is_small(mod):
    """64 wmma.mma, 64 wmma.load, 4 wmma.store at level 0: the frame of
    run_warp (read from the emitted assembly) is under 256 KiB (the inline
    lowering's was ~3 MiB)."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
    from tc_profile import profile
    r = profile(mod, mod.function("wmma_f16_k16"))
    assert r["count"]["wmma.mma"] == 64 and r["count"]["wmma.load"] == 64
    assert 0 < r["frame"] < 256 * 1024
