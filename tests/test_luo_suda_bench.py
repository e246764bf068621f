"""The benchmark kinds of Luo & Suda's Table 3 (tests/cuda/luo_suda_bench.cu)
under ptxc: each kernel, run in full mode on small data, writes what numpy
computes, with one and with several warps (section 4.2 varies the warps on
the same data: the grid-stride loops make the result independent of the
launch). bench/predict_validate.py times the same PTX on a GPU.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import ptxc

HERE = os.path.dirname(os.path.abspath(__file__))
PTX = os.path.join(HERE, "cuda", "luo_suda_bench.sm90.ptx")
sys.path.insert(0, os.path.join(HERE, "..", "bench"))

import predict_validate as pv  # noqa: E402

LAUNCHES = [((1, 1, 1), (32, 1, 1)), ((3, 1, 1), (64, 1, 1))]


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


def run(module, kernel, launch, args):
    grid, block = launch
    ptxc.launch(module, kernel, grid, block, args, mode="full")
    return args


@pytest.mark.parametrize("launch", LAUNCHES)
def test_svm_dot(module, launch):
    rng = np.random.default_rng(1)
    x, w = rng.random((8, 24), np.float32), rng.random(24, np.float32)
    out = run(module, "svm_dot", launch, [x.ravel().copy(), w, np.zeros(8, np.float32), 8, 24])[2]
    assert np.allclose(out, x.astype(np.float64) @ w, rtol=1e-5)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_matmul(module, launch):
    rng = np.random.default_rng(2)
    a, b = rng.random((12, 12), np.float32), rng.random((12, 12), np.float32)
    c = run(module, "matmul", launch, [a.ravel().copy(), b.ravel().copy(),
                                       np.zeros(144, np.float32), 12])[2]
    assert np.allclose(c.reshape(12, 12), a.astype(np.float64) @ b, rtol=1e-5)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_linear_filter(module, launch):
    img = np.random.default_rng(3).random((7, 10), np.float32)
    out = run(module, "linear_filter", launch, [img.ravel().copy(), np.zeros(70, np.float32),
                                                10, 7])[1]
    pad = np.pad(img.astype(np.float64), 1, mode="edge")
    want = sum(pad[1 + dy:8 + dy, 1 + dx:11 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9
    assert np.allclose(out.reshape(7, 10), want, rtol=1e-5)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_sepia(module, launch):
    rgb = (np.random.default_rng(4).random((50, 3)) * 255).astype(np.float32)
    out = run(module, "sepia", launch, [rgb.ravel().copy(), np.zeros(150, np.float32), 50])[1]
    m = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]])
    assert np.allclose(out.reshape(50, 3), np.minimum(255, rgb.astype(np.float64) @ m.T),
                       rtol=1e-5)


def cnd(d):
    a = (0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429)
    k = 1 / (1 + 0.2316419 * np.abs(d))
    poly = k * (a[0] + k * (a[1] + k * (a[2] + k * (a[3] + k * a[4]))))
    c = 0.39894228040143267794 * np.exp(-0.5 * d * d) * poly
    return np.where(d > 0, 1 - c, c)


def black_scholes(s, x, t, r, v, e=None):
    """The kernels' equations in float64; ``e``: Black-Scholes-7's extras."""
    e = np.zeros((7, len(s))) if e is None else e.astype(np.float64)
    s, x, t = (a.astype(np.float64) for a in (s, x, t))
    sqrt_t = np.sqrt(t) + e[0]
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t) + e[1]
    d2 = d1 - v * sqrt_t + e[2]
    c1, c2 = cnd(d1) + e[3], cnd(d2) + e[4]
    exp_rt = np.exp(-r * t) + e[5]
    call = s * c1 - x * exp_rt * c2 + e[6]
    put = x * exp_rt * (1 - c2) - s * (1 - c1)
    return call, put


def options(n, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(5, 30, n).astype(np.float32), rng.uniform(1, 100, n).astype(np.float32),
            rng.uniform(0.25, 10, n).astype(np.float32))


@pytest.mark.parametrize("launch", LAUNCHES)
def test_black_scholes(module, launch):
    s, x, t = options(100, 5)
    args = run(module, "black_scholes", launch, [s, x, t, np.zeros(100, np.float32),
                                                 np.zeros(100, np.float32), np.float32(0.02),
                                                 np.float32(0.30), 100])
    call, put = black_scholes(s, x, t, np.float32(0.02), np.float32(0.30))
    assert np.allclose(args[3], call, rtol=1e-4, atol=1e-4)
    assert np.allclose(args[4], put, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_black_scholes7(module, launch):
    s, x, t = options(100, 6)
    e = (np.random.default_rng(7).random((7, 100)) * 0.01).astype(np.float32)
    args = run(module, "black_scholes7", launch, [s, x, t, e.ravel().copy(),
                                                  np.zeros(100, np.float32),
                                                  np.zeros(100, np.float32), np.float32(0.02),
                                                  np.float32(0.30), 100])
    call, put = black_scholes(s, x, t, np.float32(0.02), np.float32(0.30), e)
    assert np.allclose(args[4], call, rtol=1e-4, atol=1e-4)
    assert np.allclose(args[5], put, rtol=1e-4, atol=1e-4)


def test_bench_cases_match_the_kernels(module):
    # Every case of bench/predict_validate.py names a kernel of the PTX, with
    # the paper's sizes (Table 3) and one argument per parameter.
    names = {k.name for k in module.kernels}
    assert [c.kernel for c in pv.CASES] == ["svm_dot", "matmul", "linear_filter", "sepia",
                                            "black_scholes7", "black_scholes"]
    for c in pv.CASES:
        assert c.kernel in names
        fn = next(k for k in module.kernels if k.name == c.kernel)
        assert len(c.args) == len(fn.params)
    assert pv.CASES[1].args[-1] == "256" and pv.CASES[5].args[-1] == "900000"


def test_accuracy_eq14():
    # P_acc = min / max (eq. 14); the means of Table 4.
    assert pv.accuracy(2.0, 2.5) == pv.accuracy(2.5, 2.0) == 0.8
    assert pv.means([0.8, 0.9, 1.0]) == pytest.approx((0.9, (0.8 * 0.9) ** (1 / 3)))
    assert pv.warp_sweep(132, 32)[0] == (132, 32) and pv.warp_sweep(132, 32)[-1] == (132, 1024)
