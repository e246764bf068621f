"""End-to-end runs of nvcc-compiled CUDA SDK kernels from the shared corpus
(GPU Ocelot's copies): results against numpy, hybrid == full counters, and
both address sizes (64-bit and an old 32-bit-pointer module)."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

import ptxc

CORPUS = "/work/shared/corpus/ocelot"
MATMUL = [f"{CORPUS}/sdk2.2/matrixMul.ptx",
          f"{CORPUS}/tests/cuda4.1sdk/tests/matrixMulDynlinkJIT/extras/matrixMul_kernel_64.ptx",
          f"{CORPUS}/tests/cuda4.1sdk/tests/matrixMulDynlinkJIT/extras/matrixMul_kernel_32.ptx"]
BLACKSCHOLES = f"{CORPUS}/sdk2.2/BlackScholes.ptx"


@pytest.mark.parametrize("path", MATMUL, ids=[os.path.basename(p) for p in MATMUL])
def test_matrix_mul_shared_tiles(path):
    if not os.path.exists(path):
        pytest.skip("corpus not available")
    m = ptxc.load(path)
    n = 64
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    k = m.kernels[0]
    full = ptxc.launch(m, k, (n // 16, n // 16), (16, 16), [c, a, b, n, n], mode="full")
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    hybrid = ptxc.launch(m, k, (n // 16, n // 16), (16, 16), [np.zeros_like(c), a, b, n, n],
                         mode="hybrid")
    assert hybrid.counters() == full.counters()
    assert full.per_cta["ctas"] == 16


def cnd(d):
    a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    k = 1 / (1 + 0.2316419 * abs(d))
    c = 0.3989422804 * math.exp(-0.5 * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))))
    return 1 - c if d > 0 else c


def test_black_scholes_special_functions():
    if not os.path.exists(BLACKSCHOLES):
        pytest.skip("corpus not available")
    m = ptxc.load(BLACKSCHOLES)
    n, r, v = 4000, 0.02, 0.30
    rng = np.random.default_rng(3)
    s = rng.uniform(5, 30, n).astype(np.float32)
    x = rng.uniform(1, 100, n).astype(np.float32)
    t = rng.uniform(0.25, 10, n).astype(np.float32)
    call, put = np.zeros(n, np.float32), np.zeros(n, np.float32)
    prof = ptxc.launch(m, None, 8, 128, [call, put, s, x, t, r, v, n], mode="full")
    want_c, want_p = [], []
    for si, xi, ti in zip(s.astype(float), x.astype(float), t.astype(float)):
        sq = math.sqrt(ti)
        d1 = (math.log(si / xi) + (r + 0.5 * v * v) * ti) / (v * sq)
        d2 = d1 - v * sq
        e = math.exp(-r * ti)
        want_c.append(si * cnd(d1) - xi * e * cnd(d2))
        want_p.append(xi * e * (1 - cnd(d2)) - si * (1 - cnd(d1)))
    np.testing.assert_allclose(call, want_c, atol=1e-4)
    np.testing.assert_allclose(put, want_p, atol=1e-4)
    assert prof.flop_count_sp_special > 0
    hybrid = ptxc.launch(m, None, 8, 128, {0: call, 1: put, 2: s, 3: x, 4: t, 5: r, 6: v, 7: n},
                         mode="hybrid")
    assert hybrid.counters() == prof.counters()
