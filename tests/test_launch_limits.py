"""Launch limits and argument checks (issue 18): each bad launch is refused
with one PtxcError naming the limit, never a MemoryError, a struct error or
a silently wrong run.

The limits are CUDA's (Programming Guide, "Technical Specifications per
Compute Capability"): gridDim.y/z <= 65535, blockDim.z <= 64, and the H100's
227 KiB opt-in shared memory per block (232448 bytes), the largest of
ptxc's GPU models.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from ptxc import PtxcError
from ptxc.launcher.args import bind_args
from ptxc.launcher.config import find_kernel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "branchy.ptx")
KERNEL = "vecadd_branchy"          # (float *a, float *b, float *c, int n): .u64 x3, .u32


@pytest.fixture(scope="module")
def module():
    return ptxc.load(EXAMPLE)


def buffers(n=512):
    return [np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)]


def cli(*args):
    """(exit status, stderr) of the ptxc command, run in-process."""
    from click.testing import CliRunner
    from ptxc.cli.main import cli as app
    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return r.exit_code, r.stderr if hasattr(r, "stderr") else r.output


@pytest.mark.parametrize("grid,block,words", [
    ((4, 65536, 1), (128, 1, 1), "gridDim.y = 65536 is over CUDA's limit of 65535"),
    ((4, 1, 65536), (128, 1, 1), "gridDim.z = 65536 is over CUDA's limit of 65535"),
    ((4, 1, 1), (2, 2, 65), "blockDim.z = 65 is over CUDA's limit of 64"),
])
def test_grid_and_block_limits(module, grid, block, words):
    with pytest.raises(PtxcError, match=words):
        ptxc.launch(module, KERNEL, grid, block, buffers() + [500])


def test_shared_memory_over_the_largest_gpu(module):
    with pytest.raises(PtxcError, match="232448 bytes"):
        ptxc.launch(module, KERNEL, 4, 128, buffers() + [500], shared_bytes=4 << 30)
    with pytest.raises(PtxcError, match="232449 bytes of dynamic shared memory"):
        ptxc.launch(module, KERNEL, 4, 128, buffers() + [500], shared_bytes=232449)


@pytest.mark.parametrize("steps", [-1, 0])
def test_max_steps_must_be_positive(module, steps):
    with pytest.raises(PtxcError, match="max_steps must be a positive integer"):
        ptxc.launch(module, KERNEL, 4, 128, buffers() + [500], max_steps=steps)


def test_negative_int_for_u32_parameter_is_twos_complement(module):
    # nvcc declares `int n` as .u32; CUDA passes -1 as the bits 0xffffffff.
    fn = find_kernel(module, KERNEL)
    params, _, _ = bind_args(fn, buffers() + [-1], "full")
    assert params[-4:] == b"\xff\xff\xff\xff"
    with pytest.raises(PtxcError, match="does not fit"):
        bind_args(fn, buffers() + [-(1 << 31) - 1], "full")


def test_read_only_array_written_by_the_kernel_is_refused(module):
    a, b, c = buffers()
    c.flags.writeable = False
    with pytest.raises(PtxcError, match="wrote to parameter 'vecadd_branchy_param_2', a read-only"):
        ptxc.launch(module, KERNEL, 4, 128, [a, b, c, 500], mode="full")
    # a read-only input the kernel only reads is fine; c = a + b for i < n
    a.flags.writeable = False
    out = np.zeros(512, np.float32)
    ptxc.launch(module, KERNEL, 4, 128, [a, b, out, 500], mode="full")
    assert out[0] == 1.0            # a[0] + b[0] = 0 + 1, then the branch's even-lane loop: 0 steps


def test_duplicate_argument_is_refused(module):
    with pytest.raises(PtxcError, match="given twice"):
        ptxc.launch(module, KERNEL, 4, 128, {0: buffers()[0], "vecadd_branchy_param_0": buffers()[1]})
    r = cli("opt", "--pass=count", "--kernel", KERNEL, "--grid", "4", "--block", "128",
            "--arg", "0=zeros:f32:512", "--arg", "1=zeros:f32:512", "--arg", "2=zeros:f32:512",
            "--arg", "3=500", "--arg", "3=7", EXAMPLE)
    assert r[0] == 1 and "given twice (--arg 3=7)" in r[1] and "Traceback" not in r[1]


def test_huge_generated_buffer_says_too_large():
    r = cli("opt", "--pass=count", "--kernel", KERNEL, "--grid", "4", "--block", "128",
            "--arg", "0=zeros:f32:99999999999", "--arg", "1=zeros:f32:512",
            "--arg", "2=zeros:f32:512", "--arg", "3=500", EXAMPLE)
    # 99999999999 f32 elements = 399999999996 bytes, over one 4 GiB segment
    assert r[0] == 1, r[1]
    assert "399999999996 bytes is too large" in r[1] and "internal error" not in r[1]


def test_static_shared_memory_over_the_largest_gpu():
    # tests/launch_limits/big_shared.cu: __shared__ int s[75000] = 300000 bytes > 232448
    # (outside tests/cuda: ptxas refuses this PTX, and tests there must pass ptxas)
    module = ptxc.load(os.path.join(ROOT, "tests", "launch_limits", "big_shared.sm90.ptx"))
    with pytest.raises(PtxcError, match="300000 bytes of .shared variables \\+ 0 dynamic per CTA: "
                                        "the largest GPU limit is 232448 bytes"):
        ptxc.launch(module, "_Z10big_sharedPi", 1, 32, [np.zeros(32, np.int32)], mode="full")
