"""``ptxc calibrate`` without a GPU, and its micro-benchmarks under ptxc.

The kernels are ptxc/predict/microbench/microbench.cu, compiled by nvcc 13.0
with ``nvcc -ptx -arch=sm_75 -O3 microbench.cu -o microbench.sm75.ptx``
(ptxc/predict/microbench/README.md). Outputs are checked against values
derived by hand; every launch runs hybrid and full with equal counters.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
from click.testing import CliRunner

import ptxc
from executor_harness import launch_both
from ptxc.cli.main import cli
from ptxc.predict.calibrate import PTX, class_count_per_block


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


def both(module, kernel, grid, block, make_args):
    """The full run's buffers (hybrid and full give the same counters)."""
    return launch_both(module, kernel, grid, block, make_args())["full"][1]


def test_no_gpu_one_line(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "cupy", None)      # import cupy -> ImportError
    out = tmp_path / "p.json"
    r = CliRunner().invoke(cli, ["calibrate", "-o", str(out)])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "ptxc: error: calibrate needs a CUDA GPU and CuPy (pip install 'ptxc[gpu]'): "
        "CuPy is not installed"]
    assert not out.exists()


def test_every_kernel_parses(module):
    assert sorted(k.name for k in module.kernels) == sorted(
        ["chase_global", "chase_shared", "fma_chain", "tp_fp32", "tp_fp64", "tp_int",
         "tp_sfu", "copy", "empty"])


@pytest.mark.parametrize("kernel, block", [("chase_global", 1), ("chase_shared", 64)])
def test_chase(module, kernel, block):
    # next = (i + 3) mod 10: from 0, 7 steps reach 21 mod 10 = 1.
    nxt = ((np.arange(10) + 3) % 10).astype(np.uint32)
    extra = [10] if kernel == "chase_shared" else []
    args = both(module, kernel, (1, 1, 1), (block, 1, 1),
                lambda: [nxt.copy(), *extra, 7, np.zeros(1, np.uint32),
                         np.zeros(1, np.int64)])
    assert args[-2][0] == 1


def test_fma_chain(module):
    # v = v * 1 + 0.5, 16 per step, 3 steps: 1 + 48 x 0.5 = 25 (exact in f32)
    args = both(module, "fma_chain", (1, 1, 1), (1, 1, 1),
                lambda: [np.array([1, 1, 0.5], np.float32), 3, np.zeros(1, np.int64)])
    assert args[0][0] == 25.0


@pytest.mark.parametrize("kernel, dtype, cls", [("tp_fp32", np.float32, "fp32"),
                                                ("tp_fp64", np.float64, "fp64")])
def test_throughput_counts(kernel, dtype, cls):
    # nvcc unrolls the steps loop 4 times (8 chains x 4 steps = 32 FMAs of the
    # class per pass per thread); the loop counter is integer. 4 -> 8 steps adds
    # one pass: 8 warps x 32 = 256 warp instructions of the class.
    assert class_count_per_block(kernel, dtype, cls, 8) - \
        class_count_per_block(kernel, dtype, cls, 4) == 256


def test_copy_and_empty(module):
    a = np.arange(64, dtype=np.float32)
    args = both(module, "copy", (2, 1, 1), (4, 1, 1),
                lambda: [a.copy(), np.zeros(64, np.float32), 16])
    assert np.array_equal(args[1], a)          # 16 float4 = 64 floats copied
    both(module, "empty", (1, 1, 1), (1, 1, 1), lambda: [])
