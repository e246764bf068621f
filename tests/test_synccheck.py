"""synccheck (docs/check.md): barriers reached by part of a warp or split
between barrier instructions, and warp collectives whose member mask names
lanes that do not execute them.

The kernels are tests/cuda/synccheck.cu, compiled by
``nvcc -ptx -arch=sm_90 -O3 -lineinfo synccheck.cu -o synccheck.sm90.lineinfo.ptx``
(CUDA 13.0; tests/cuda/build.sh). Every expected error is derived from the
source by hand (comments).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.check.hazards import launch_text
from ptxc.launcher.api import launch

PTX = Path(__file__).parent / "cuda" / "synccheck.sm90.lineinfo.ptx"
LINES = PTX.read_text().splitlines()
CU = next(s.split('"')[1] for s in LINES if s.strip().startswith(".file\t1 "))   # as nvcc wrote it


def after(kernel: str, text: str, nth: int = 0) -> int:
    """The 1-based line of the nth line containing ``text`` after kernel ``kernel``'s entry."""
    start = next(i for i, s in enumerate(LINES) if f".entry {kernel}" in s)
    return [i + 1 for i, s in enumerate(LINES) if i >= start and text in s][nth]


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def run(module, name, grid, block, args, check="synccheck", **kw):
    k = next(x for x in module.kernels if name in x.name)
    return launch(module, k, grid, block, args, mode="full", check=check, **kw)


def test_barrier_in_divergent_if(module):
    # if (t < 16) __syncthreads(); with 32 threads: the warp reaches bar.sync
    # with lanes 0-15 while 16-31 are live on the other path. Counted per
    # thread that reached it: 16 per CTA, 2 CTAs. The run goes on (the lanes
    # wait alone): every thread still writes out[t] = t.
    out = np.zeros(64, np.int32)
    prof = run(module, "sync_in_if", (2, 1, 1), (32, 1, 1), (out,))
    (e,) = prof.sync_errors
    assert (e.error, e.line, e.count) == ("divergent-warp", after("_Z10sync_in_ifPi", "bar.sync"), 32)
    assert (e.block, e.thread) == ((0, 0, 0), (0, 0, 0))
    assert e.detail == "lanes 16-31 of the warp did not reach this barrier"
    np.testing.assert_array_equal(out[:32], np.arange(32))


def test_warps_at_different_barriers(module):
    # 64 threads: warp 0 waits at the barrier of the if branch, warp 1 at the
    # one of the else branch; the executor releases them together. The
    # deviating warp (the one not at the lowest warp's barrier) is warp 1:
    # 32 threads. Warp 0 computes 1 + 2, warp 1 3 + 4.
    out = np.zeros(64, np.int32)
    prof = run(module, "two_barriers", (1, 1, 1), (64, 1, 1), (out,))
    (e,) = prof.sync_errors
    first, second = after("_Z12two_barriersPi", "bar.sync", 0), after("_Z12two_barriersPi", "bar.sync", 1)
    assert (e.error, e.line, e.count, e.thread) == ("divergent-block", second, 32, (32, 0, 0))
    assert e.detail == f"released together with thread (0,0,0) waiting at line {first} (bar.sync)"
    np.testing.assert_array_equal(out, [3] * 32 + [7] * 32)


def test_full_mask_shuffle_in_divergent_branch(module):
    # __shfl_sync(0xffffffff, v, 0) under if (t < 16): lanes 0-15 execute it,
    # the mask names 16-31 (live, on the other path): each of the 16
    # executing lanes has a bad mask; 2 CTAs.
    data = np.arange(64, dtype=np.int32) + 5
    out = np.zeros(64, np.int32)
    prof = run(module, "shfl_divergent", (2, 1, 1), (32, 1, 1), (data, out))
    (e,) = prof.sync_errors
    assert (e.error, e.opcode, e.count, e.thread) == ("invalid-mask", "shfl.sync.idx.b32", 32, (0, 0, 0))
    assert e.detail == "membermask 0xffffffff names lanes 16-31, which do not execute this instruction"


def test_full_mask_syncwarp_in_divergent_branch(module):
    # __syncwarp() (mask 0xffffffff) under if (t < 16): 16 executing lanes,
    # each naming lanes 16-31, live on the other path; 2 CTAs.
    out = np.zeros(64, np.int32)
    prof = run(module, "syncwarp_divergent", (2, 1, 1), (32, 1, 1), (out,))
    (e,) = prof.sync_errors
    line = after("_Z18syncwarp_divergentPi", "bar.warp.sync")
    assert (e.error, e.line, e.opcode, e.count) == ("invalid-mask", line, "bar.warp.sync", 32)
    assert e.detail == "membermask 0xffffffff names lanes 16-31, which do not execute this instruction"


def test_correct_masks_and_exited_lanes(module):
    # 0x0000ffff masks for the 16 lanes that execute; then lanes 16-31
    # return (nvcc branches them to the kernel's ret, where the executor
    # parks them) and a full-mask shuffle and a barrier follow: the parked
    # lanes count as exited, so nothing is reported.
    data = np.arange(32, dtype=np.int32) + 5
    out = np.zeros(32, np.int32)
    prof = run(module, "masks_ok", (1, 1, 1), (32, 1, 1), (data, out), check="all")
    assert prof.sync_errors == [] and prof.race_hazards == [] and prof.mem_errors == []
    # out[t] = lane 1's v = lane 0's input (5) for t < 16; v = in[t] above
    np.testing.assert_array_equal(out, [5] * 16 + list(range(21, 37)))


def test_same_result_for_any_worker_count(module):
    runs = [run(module, "two_barriers", (8, 1, 1), (64, 1, 1), (np.zeros(512, np.int32),),
                threads=t) for t in (1, 2)]
    assert [e.__dict__ for e in runs[0].sync_errors] == [e.__dict__ for e in runs[1].sync_errors]
    assert runs[0].sync_errors[0].count == 8 * 32


def test_counters_equal_unchecked_runs(module):
    k = next(x for x in module.kernels if "sync_in_if" in x.name)
    profs = [launch(module, k, (2, 1, 1), (32, 1, 1), (np.zeros(64, np.int32),), mode=m, check=c)
             for m, c in (("full", "synccheck"), ("full", None), ("hybrid", None))]
    assert profs[0].counters() == profs[1].counters() == profs[2].counters()


def test_report_shape(module):
    prof = run(module, "shfl_divergent", (1, 1, 1), (32, 1, 1),
               (np.zeros(32, np.int32), np.zeros(32, np.int32)))
    text = launch_text("synccheck", prof.sync_errors).splitlines()
    line = after("_Z14shfl_divergentPKiPi", "shfl.sync")
    # synccheck.cu line 34 calls __shfl_sync (not the header's line 373)
    assert text == [
        "========= COMPUTE-SANITIZER (ptxc synccheck)",
        "========= Barrier error detected. Invalid arguments",
        f"=========     at _Z14shfl_divergentPKiPi in {CU}:34 ({PTX}:{line}, shfl.sync.idx.b32)",
        "=========     by thread (0,0,0) in block (0,0,0)",
        "=========     membermask 0xffffffff names lanes 16-31, which do not execute this instruction",
        "=========     16 lanes in this launch (first occurrence shown)",
        "=========",
        "========= ERROR SUMMARY: 16 errors"]


def test_opt_check_cli():
    from click.testing import CliRunner

    from ptxc.cli.main import cli
    r = CliRunner().invoke(cli, ["opt", "--pass=count", "--kernel", "_Z10sync_in_ifPi", "--grid", "1",
                                 "--block", "32", "--arg", "0=zeros:i32:32", "--check", "synccheck",
                                 "--format", "json", str(PTX)])
    assert r.exit_code == 1, r.output
    import json
    dyn = json.loads(r.output)["count"]["functions"]["_Z10sync_in_ifPi"]["dynamic"]
    assert dyn["synccheck"]["error_count"] == 16
    assert dyn["synccheck"]["errors"][0]["error"] == "divergent-warp"
