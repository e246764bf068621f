"""Calls through function pointers (backends/llvm/ops/indirect_calls.py,
ptxc/ir/call_targets.py): tests/cuda/indirect_calls.cu, compiled with
``nvcc -ptx -arch=sm_90 -O3`` (tests/cuda/build.sh).

* virtual_areas: C++ virtual calls on objects made with device new and
  freed with delete (a virtual destructor: a second indirect call), as
  cuda-samples newdelete; the vtables are .global initialisers. Output
  checked with numpy (s^2 for even threads, 3 s^2 for odd ones).
* table_calls: a __device__ table of function pointers; the lanes of one
  warp call three functions. Counters derived by hand for one warp of 32
  lanes, sel = lane % 3:
  kernel entry block 11 instructions; the block up to the call 17, the
  continuation after it 4 (bb1: 21 in all); each op_* body 5 (two ld.param,
  the operation, st.param, ret), run once per function with its lanes
  (11, 11, 10 threads); the final ret 1. inst_executed = 11 + 21 + 3 * 5 +
  1 = 48; thread_inst_executed = 32 * (11 + 21 + 1) + 5 * 32 = 1216; one
  branch (the bounds check), not divergent.
* every launch: hybrid counters == full counters.
* errors: a null pointer, a number that is no function's address, and a
  function called through a prototype that does not match its signature
  stop the launch naming kernel, CTA and thread.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from executor_harness import launch_both
from ptxc.ir.call_targets import address_taken, candidates, function_address

PTX = os.path.join(os.path.dirname(__file__), "cuda", "indirect_calls.sm90.ptx")


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


def test_address_taken_and_prototypes(module):
    taken = sorted(f.name for f in address_taken(module))
    assert taken == sorted(["_ZN5ShapeD1Ev", "_ZN5ShapeD0Ev", "_ZNK6Square4areaEf", "_ZN6SquareD1Ev",
                            "_ZN6SquareD0Ev", "_ZNK6Circle4areaEf", "_ZN6CircleD1Ev",
                            "_ZN6CircleD0Ev", "_Z6op_addii", "_Z6op_subii", "_Z6op_mulii"])
    kernel = next(f for f in module.functions if f.name == "table_calls")
    call = next(i for i in kernel.instructions() if i.opcode == "call")
    assert sorted(f.name for f in candidates(module, call)) == ["_Z6op_addii", "_Z6op_mulii",
                                                                 "_Z6op_subii"]


def test_function_addresses_distinct_and_in_the_null_segment(module):
    addrs = [function_address(module, f.name, 32) for f in module.functions]
    names = {f.name for f in module.functions}
    assert len(set(addrs)) == len(names)
    assert all(0 < a < 1 << 32 for a in addrs)


@pytest.mark.parametrize("grid,block,n", [(1, 32, 32), (3, 64, 150)])
def test_virtual_calls_new_delete(module, grid, block, n):
    s = (np.arange(n, dtype=np.float32) / 4).astype(np.float32)
    out = np.zeros(n, np.float32)
    runs = launch_both(module, "virtual_areas", grid, block, [s, out, n])
    got = runs["full"][1][1]
    want = np.where(np.arange(n) % 2 == 0, s * s, np.float32(3) * s * s).astype(np.float32)
    np.testing.assert_array_equal(got, want)


def test_table_calls_hand_counts(module):
    n = 32
    sel = (np.arange(n) % 3).astype(np.int32)
    a = np.arange(n, dtype=np.int32) * 7 - 50
    b = np.full(n, 5, np.int32)
    runs = launch_both(module, "table_calls", 1, 32, [sel, a, b, np.zeros(n, np.int32), n])
    prof, args = runs["full"]
    np.testing.assert_array_equal(args[3], np.choose(sel, [a + b, a - b, a * b]))
    assert prof.inst_executed == 48
    assert prof.thread_inst_executed == 1216
    assert (prof.branch, prof.divergent_branch) == (1, 0)
    threads = {k.split(":")[0]: v["thread_execs"] for k, v in prof.per_block.items()
               if k.startswith("_Z6op_")}
    assert threads == {"_Z6op_addii": 11, "_Z6op_subii": 11, "_Z6op_mulii": 10}


def test_table_calls_many_ctas(module):
    n = 1000
    rng = np.random.default_rng(29)
    sel = rng.integers(0, 3, n).astype(np.int32)
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    b = rng.integers(-1000, 1000, n).astype(np.int32)
    runs = launch_both(module, "table_calls", 8, 128, [sel, a, b, np.zeros(n, np.int32), n])
    np.testing.assert_array_equal(runs["full"][1][3], np.choose(sel, [a + b, a - b, a * b]))


@pytest.mark.parametrize("pointer,what", [
    (0, "indirect call through 0x0 (a null function pointer), which is not the address of a "
        "function"),
    (12345, "indirect call through 0x3039, which is not the address of a function")])
def test_bad_pointer(module, pointer, what):
    for mode in ("full", "hybrid"):
        with pytest.raises(ptxc.PtxcError) as e:
            ptxc.launch(module, "raw_call", grid=1, block=32, args=[pointer, np.zeros(32, np.int32)],
                        mode=mode)
        msg = str(e.value)
        assert "kernel raw_call, CTA (0,0,0), thread (0,0,0): " + what in msg, msg


def test_prototype_mismatch(module):
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(module, "wrong_prototype", grid=1, block=32, args=[np.zeros(32, np.int32), 1],
                    mode="full")
    assert ("kernel wrong_prototype, CTA (0,0,0), thread (0,0,0): indirect call of _Z6op_subii "
            "(.param .b32) (.param .b32, .param .b32) through a pointer of prototype (.param .b32) "
            "(.param .b32): the signatures differ") in str(e.value)


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_virtual_calls_under_ptxc_run(tmp_path, mode):
    """tests/cuda_apps/virtual_app.cu (nvcc at test time): objects made with
    device new in one launch, their virtual area() called in the next,
    deleted through the virtual destructor in a third; the host checks
    every value."""
    from runtime_apps import AppBuilder, run_ptxc
    app = AppBuilder(tmp_path).build("virtual_app")
    run = run_ptxc(app, mode=mode)
    assert run.returncode == 0, run.proc.stderr
    assert "virtual_app: 0 wrong, no error" in run.proc.stdout


def test_pointer_from_mov_of_function_names(module):
    """``mov.u64 %rd, _Z6op_addii`` / ``_Z6op_subii`` and ``selp``: even
    threads add, odd ones subtract; the two calls of a warp run one after
    the other and the warp reconverges after the call."""
    n = 100
    a = np.arange(n, dtype=np.int32) * 3
    runs = launch_both(module, "pick_calls", 2, 64, [a, np.zeros(n, np.int32), n])
    i = np.arange(n, dtype=np.int32)
    np.testing.assert_array_equal(runs["full"][1][1], np.where(i % 2 == 0, a + i, a - i))
    prof = runs["full"][0]
    threads = {k.split(":")[0]: v["thread_execs"] for k, v in prof.per_block.items()
               if k.startswith("_Z6op_")}
    assert threads == {"_Z6op_addii": 50, "_Z6op_subii": 50, "_Z6op_mulii": 0}
