"""Dynamic parallelism (CDP2) under ptxc.launch: kernels that launch kernels
(tests/cuda/cdp_launch.cu and cdp_quicksort.cu, PTX from
``nvcc -ptx -rdc=true -arch=sm_90 -O3``, tests/cuda/build.sh).

Counts are derived by hand from the PTX (the derivations are next to the
numbers), outputs with numpy or a Python model of the algorithm, launch
orders from the rules docs/runtime.md documents ("Device-side launches":
children after the launching grid, depth first in issue order, tail
launches after the grid's other work). Every launch of every tree must
give the same counters in a hybrid run as in the full run.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.ops import device_launch as dl
from ptxc.passes.slice.memory_deps import CDP_EXTERNS

HERE = os.path.join(os.path.dirname(__file__), "cuda")


@pytest.fixture(scope="module")
def cdp():
    return ptxc.load(os.path.join(HERE, "cdp_launch.sm90.rdc.ptx"))


@pytest.fixture(scope="module")
def qsort():
    return ptxc.load(os.path.join(HERE, "cdp_quicksort.sm90.rdc.ptx"))


def tree_counters(prof) -> list:
    return [prof.counters()] + [c.counters() for c in prof.device_launches]


def both(module, kernel, make_args, **kw):
    """The full and the hybrid Profile of one launch (fresh arguments each);
    the hybrid run must give every launch of the tree the same counters."""
    full_args = make_args()
    full = ptxc.launch(module, kernel, args=full_args, mode="full", **kw)
    hybrid = ptxc.launch(module, kernel, args=make_args(), mode="hybrid", **kw)
    assert tree_counters(hybrid) == tree_counters(full)
    assert [c.kernel for c in hybrid.device_launches] == [c.kernel for c in full.device_launches]
    return full, full_args


def test_slice_knows_every_device_runtime_call():
    assert set(CDP_EXTERNS) == set(dl.NAMES)


def test_tree_of_launches(cdp):
    """cdp_tree<<<2, 4>>>(depth 0, max_depth 3): every CTA at depth 0 and 1
    launches cdp_tree<<<2, 4>>> at the next depth: 1 + 2 + 4 grids of 2 CTAs."""
    def args():
        return [np.zeros(4, np.int32), np.full(16, -1, np.int32), np.zeros(1, np.int32), 0, 3]
    full, (visits, order, nxt, _, _) = both(cdp, "cdp_tree", args, grid=2, block=4)
    assert visits.tolist() == [8, 16, 32, 0]          # 2, 4, 8 CTAs of 4 threads
    # depth first in issue order: the grid from CTA 0, its two children, then the grid from CTA 1
    assert order[:14].tolist() == [0, 1, 16, 17, 32, 33, 32, 33, 16, 17, 32, 33, 32, 33]
    assert nxt[0] == 14
    kids = full.device_launches
    assert [(c.depth, c.parent_index, c.launched_by.ctaid[0]) for c in kids] == [
        (1, -1, 0), (2, 0, 0), (2, 0, 1), (1, -1, 1), (2, 3, 0), (2, 3, 1)]
    assert all(c.grid == (2, 1, 1) and c.block == (4, 1, 1) for c in kids)
    assert all(c.launched_by.tid == (0, 0, 0) and c.launched_by.stream == dl.STREAM_NULL for c in kids)
    # PTX of cdp_tree: a CTA that launches runs 12 instructions with 4 lanes (to the
    # divergent @%p1 bra), 36 with lane 0 (BB0 tail, the launch's parameter stores,
    # both calls), then ret with 4 lanes: 49 warp-level, 12*4 + 36 + 4 = 88 thread-level;
    # a leaf CTA leaves at the second branch: 24 + ret = 25, 12*4 + 12 + 4 = 64
    launching, leaf = (49, 88, 3), (25, 64, 2)
    expect = [launching, launching, leaf, leaf, launching, leaf, leaf]
    got = [(p.inst_executed, p.thread_inst_executed, p.branch) for p in [full] + kids]
    assert got == [(2 * a, 2 * b, 2 * c) for a, b, c in expect]
    assert [p.divergent_branch for p in [full] + kids] == [2] * 7    # @%p1 bra, once per CTA
    rows = full.to_dict()["device_launches"]
    assert [r["parent"] for r in rows] == [-1, 0, 0, -1, 3, 3]
    assert rows[0]["stream"] == "the block's NULL stream" and rows[0]["launching_cta"] == [0, 0, 0]


def test_launch_order_rules(cdp):
    """order_root logs 1, launches tail 2, mid 3 (which logs 3, launches tail 32
    and then 31), leaf 4 into a created stream, 5 fire-and-forget, tail 6.
    Tail launches run after the grid and all its other work, in launch order."""
    def args():
        return [np.full(16, -1, np.int32), np.zeros(1, np.int32), np.full(2, -1, np.int32)]
    full, (log, nxt, errs) = both(cdp, "order_root", args, grid=1, block=32)
    assert log[:8].tolist() == [1, 3, 31, 32, 4, 5, 2, 6]
    assert nxt[0] == 8 and errs[0] == 0
    streams = [(c.kernel, c.parent_index, c.launched_by.stream) for c in full.device_launches]
    assert streams == [("_Z3midPiS_i", -1, dl.STREAM_NULL), ("_Z4leafPiS_i", 0, dl.STREAM_NULL),
                       ("_Z4leafPiS_i", 0, dl.STREAM_TAIL), ("_Z4leafPiS_i", -1, dl.FIRST_STREAM),
                       ("_Z4leafPiS_i", -1, dl.STREAM_FIRE_AND_FORGET),
                       ("_Z4leafPiS_i", -1, dl.STREAM_TAIL), ("_Z4leafPiS_i", -1, dl.STREAM_TAIL)]
    # the guide's rules, checked on the log itself
    pos = {v: k for k, v in enumerate(log[:8].tolist())}
    assert all(pos[t] > pos[w] for t in (2, 6) for w in (1, 3, 31, 32, 4, 5))
    assert pos[2] < pos[6] and pos[32] > pos[31] > pos[3]


def test_device_side_errors(cdp):
    """bad_launches: a block of 2048 threads and a grid.y of 70000 are
    cudaErrorInvalidConfiguration (9), seen by cudaPeekAtLastError (kept) and
    cudaGetLastError (reset); a blocking device stream is cudaErrorInvalidValue
    (1). Only the one good launch runs."""
    def args():
        return [np.full(8, -1, np.int32), np.zeros(1, np.int32)]
    full, (errs, count) = both(cdp, "bad_launches", args, grid=1, block=32)
    assert errs[:6].tolist() == [9, 9, 0, 9, 1, 1]
    assert count[0] == 1 and len(full.device_launches) == 1


def test_pending_launch_limit(cdp):
    """many<<<1, 8>>>: every thread launches one grid; with the limit at 4 the
    first four (lanes 0-3, issue order) succeed and the rest get
    cudaErrorLaunchPendingCountExceeded (69)."""
    def args():
        return [np.full(8, -1, np.int32), np.zeros(1, np.int32)]
    full, (errs, count) = both(cdp, "many", args, grid=1, block=8, pending_launch_limit=4)
    assert errs.tolist() == [0] * 4 + [69] * 4
    assert count[0] == 4 and [c.launched_by.tid[0] for c in full.device_launches] == [0, 1, 2, 3]


def test_pending_limit_counts_the_tree(cdp):
    """cdp_tree<<<2, 4>>>(max_depth 3) with the limit at 3: outstanding are the
    launches recorded and not completed. The root's two launches fit (2). The
    first depth-1 grid runs with both outstanding: its CTA 0 launches (3rd),
    its CTA 1 fails. The second depth-1 grid runs with only itself outstanding:
    both its launches fit. 2 + 1 + 2 = 5 grids."""
    def args():
        return [np.zeros(4, np.int32), np.full(16, -1, np.int32), np.zeros(1, np.int32), 0, 3]
    full, (visits, order, nxt, _, _) = both(cdp, "cdp_tree", args, grid=2, block=4,
                                            pending_launch_limit=3)
    assert [c.depth for c in full.device_launches] == [1, 2, 1, 2, 2]
    assert visits.tolist() == [8, 16, 24, 0]


def test_nesting_depth_limit(cdp):
    """deep<<<1, 1>>>(0) launches itself until depth 30; grids at depth 1..24
    run, the launch from depth 24 fails with cudaErrorLaunchMaxDepthExceeded (65)."""
    def args():
        return [np.full(32, -1, np.int32), 0]
    full, (errs, _) = both(cdp, "deep", args, grid=1, block=1)
    assert errs.tolist() == [0] * 24 + [65] + [-1] * 7
    assert [c.depth for c in full.device_launches] == list(range(1, 25))


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_parent_waiting_for_its_child_hits_the_step_budget(cdp, mode):
    """A parent that spins on a flag its child sets: the child runs after the
    parent under ptxc, so the step budget ends the run with a note."""
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(cdp, "wait_for_child", grid=1, block=1, args=[np.zeros(1, np.int32)],
                    mode=mode, max_steps=2000)
    assert "no termination within 2000" in str(e.value)
    assert "launched 1 grid, which ptxc runs after it" in e.value.notes


def quicksort_model(data: list, left: int, right: int, depth: int, grids: list) -> None:
    """tests/cuda/cdp_quicksort.cu in Python: the same partition, the launches
    in the order ptxc runs them (depth first); appends (left, right, depth)."""
    grids.append((left, right, depth))
    if depth >= 16 or right - left <= 8:
        data[left:right + 1] = sorted(data[left:right + 1])
        return
    lp, rp = left, right
    pivot = data[(left + right) // 2]
    while lp <= rp:
        lval, rval = data[lp], data[rp]
        while lval < pivot:
            lp += 1
            lval = data[lp]
        while rval > pivot:
            rp -= 1
            rval = data[rp]
        if lp <= rp:
            data[lp], data[rp] = rval, lval
            lp, rp = lp + 1, rp - 1
    if left < rp:
        quicksort_model(data, left, rp, depth + 1, grids)
    if lp < right:
        quicksort_model(data, lp, right, depth + 1, grids)


@pytest.mark.parametrize("n,seed", [(100, 1), (300, 2)])
def test_recursive_quicksort(qsort, n, seed):
    """cdpSimpleQuicksort-style: each partition launches its halves into
    streams of its own; the result is numpy's sort, the launch tree the
    Python model's (ranges via the parameters each grid got)."""
    data = np.random.default_rng(seed).integers(0, 1000, n).astype(np.uint32)
    full, (out, *_) = both(qsort, "cdp_quicksort", lambda: [data.copy(), 0, n - 1, 0], grid=1, block=1)
    assert np.array_equal(out, np.sort(data))
    grids: list = []
    model = data.tolist()
    quicksort_model(model, 0, n - 1, 0, grids)
    assert model == np.sort(data).tolist()
    got = [(0, n - 1, 0)] + [tuple(int(v) for v in np.frombuffer(c.launched_by.params[8:16], np.int32))
                             + (c.depth,) for c in full.device_launches]
    assert got == grids
    assert all(c.launched_by.stream >= dl.FIRST_STREAM for c in full.device_launches)


def test_summary_names_device_launches():
    """ptxc run's text summary says how many of a kernel's launches the device made."""
    from types import SimpleNamespace as NS
    from ptxc.runtime.report import device_note
    assert device_note([NS(parent=0), NS(parent=1), NS(parent=2)]) == " (2 of 3 launches by the device)"
    assert device_note([NS(parent=0)]) == ""


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_error_in_a_child_names_its_launch(cdp, mode):
    """bad_child's thread 1 launches store_at(data, n): data[n] is out of
    bounds; the error is the child's, with a note naming who launched it."""
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(cdp, "bad_child", grid=1, block=32, args=[np.zeros(4, np.int32), 4], mode=mode)
    assert "kernel store_at(int*, int), CTA (0,0,0), thread (0,0,0)" in str(e.value)
    assert "right after the end of buffer of parameter _Z9bad_childPii_param_0" in str(e.value)
    assert ("note: in the grid store_at(int*, int)<<<1x1x1, 1x1x1, 0, the block's NULL stream>>> "
            "launched by bad_child(int*, int) CTA (0, 0, 0) thread (1, 0, 0) (nesting depth 1)"
            in e.value.notes)
    assert e.value.printf == ["launching store_at(4)\n"]     # the grids that ran before it


def test_parent_and_child_share_the_device_heap(cdp):
    """heap_parent mallocs 2 ints (40, 2); its child adds them and frees the block."""
    full, (out,) = both(cdp, "heap_parent", lambda: [np.zeros(1, np.int32)], grid=1, block=1)
    assert out[0] == 42 and len(full.device_launches) == 1


def test_count_pass_lists_the_device_launches():
    """ptxc opt --pass=slice,count with a launch: the launched grids, one line
    each in run order, with their own counters (hand-derived above)."""
    from click.testing import CliRunner
    from ptxc.cli.main import cli
    r = CliRunner().invoke(cli, [
        "opt", "--pass=slice,count", "--kernel", "cdp_tree", "--grid", "2", "--block", "4",
        "--arg", "0=zeros:i32:4", "--arg", "1=zeros:i32:16", "--arg", "2=zeros:i32:1",
        "--arg", "3=0", "--arg", "4=3", os.path.join(HERE, "cdp_launch.sm90.rdc.ptx")],
        catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "device-side launches: 6 grids, each a launch of its own, in run order" in r.output
    assert ("[1] _Z8cdp_treePiS_S_ii<<<2x1x1, 4x1x1, 0>>> the block's NULL stream, parent 0, "
            "depth 2: inst_executed = 50, thread_inst_executed = 128, divergent_branch = 2") in r.output


def test_launch_segments_runs_the_tree(qsort):
    """launch_segments (device memory the caller manages): the tree runs on
    the caller's segments; a hybrid run without slice options still keeps
    the writes the children read (criteria=effects), so its counters are
    the full run's and the caller's memory ends sorted in both."""
    import struct
    from ptxc.launcher.api import launch_segments
    data = np.random.default_rng(3).integers(0, 1000, 64).astype(np.uint32)
    params = struct.pack("<Qiii", 6 << 32, 0, 63, 0)
    got = {}
    for mode in ("full", "hybrid"):
        seg = data.view(np.uint8).copy()
        prof = launch_segments(qsort, "cdp_quicksort", (1, 1, 1), (1, 1, 1), params, {6: seg}, mode=mode)
        assert np.array_equal(seg.view(np.uint32), np.sort(data))
        got[mode] = tree_counters(prof)
        assert len(prof.device_launches) > 2
    assert got["full"] == got["hybrid"]
