"""Recursion on a per-thread call stack (backends/llvm/ops/call_frames.py):
any depth whose frames fit in the thread's stack (cudaLimitStackSize, 1 KiB
by default; ``launch(..., stack_size=)``), a stack overflow where they do
not (compute-sanitizer's "Stack overflow"; the application gets
cudaErrorLaunchFailure), exact and equal counters in hybrid and full runs.
Every expected number is derived by hand in the comments."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.ops.call_frames import frame_model
from runtime_apps import TIMEOUT, AppBuilder, run_ptxc

HERE = os.path.dirname(__file__)
RECURSION = os.path.join(HERE, "cuda", "recursion.sm90.ptx")
HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"

# fact(n) = n * fact(n - 1), fact(n <= 1) = 1: n activations of fact. Thread
# t computes fact(base + t). Line 8 is fact's first instruction.
FACT = HDR + """
.func (.param .b32 r) fact(.param .b32 n)
{
  .reg .b32 %r<6>; .reg .pred %p;
  ld.param.b32 %r1, [n];
  setp.le.s32 %p, %r1, 1;
  @%p bra BASE;
  sub.s32 %r2, %r1, 1;
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r2;
  call (b), fact, (a);
  ld.param.b32 %r3, [b];
  }
  mul.lo.s32 %r4, %r3, %r1;
  st.param.b32 [r], %r4;
  ret;
BASE:
  st.param.b32 [r], 1;
  ret;
}
.visible .entry k(.param .u64 out, .param .u32 base)
{
  .reg .b32 %r<5>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r3, [base];
  add.u32 %r4, %r1, %r3;
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r4;
  call (b), fact, (a);
  ld.param.b32 %r2, [b];
  }
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def fact_mod(n: int) -> int:
    r = 1
    for k in range(2, n + 1):
        r = r * k % 2 ** 32
    return int(np.uint32(r).view(np.int32))


def both(module, kernel, block, make_args, **kw):
    """The full run's (Profile, args); the hybrid run's counters are equal."""
    res = {}
    for mode in ("full", "hybrid"):
        args = make_args()
        res[mode] = (ptxc.launch(module, kernel, 1, block, args, mode=mode, **kw), args)
    assert res["hybrid"][0].counters() == res["full"][0].counters()
    return res["full"]


def test_frame_sizes_follow_the_model():
    # fact: no .local; 12 bytes (return address + one saved register) + %r1
    # (n), the one register live across its call, 4 bytes: 16.
    assert frame_model(ptxc.parse(FACT, "f.ptx").function("fact")) == 16
    m = ptxc.load(RECURSION)
    # fib: 12 + %r8 (n, live across the first call) + %r5 (fib(n-1), live
    # across the second): 20, aligned to 8: 24 (ptxas -v: 24).
    assert frame_model(m.function("_Z3fibi")) == 24
    # walk: its 16-byte __local_depot1 + 12 + %rd1 (the 64-bit pointer `up`,
    # read after the call): 36 -> 40 (ptxas: 56).
    assert frame_model(m.function("_Z4walkiPKi")) == 40
    # iseven/isodd: the call's result is returned directly, nothing is live
    # across it: 12 -> 16 (ptxas: 16).
    assert frame_model(m.function("_Z6iseveni")) == frame_model(m.function("_Z5isoddi")) == 16


def test_recursion_to_32_levels_in_one_warp():
    # Thread t: fact(t + 1), t + 1 activations (at most 32 x 16 = 512 bytes).
    # fact's entry block runs once per activation of each lane:
    # sum(t + 1) = 528 thread executions, and once per depth with the lanes
    # still that deep: 32 warp executions.
    m = ptxc.parse(FACT, "fact.ptx")
    prof, (out, _) = both(m, "k", 32, lambda: [np.zeros(32, np.int32), 1])
    assert list(out) == [fact_mod(t + 1) for t in range(32)]
    assert (prof.per_block["fact:bb0"]["warp_execs"], prof.per_block["fact:bb0"]["thread_execs"]) == (32, 528)
    # BASE (2 instructions) runs once per lane, at the lane's deepest level:
    # lane t reaches fact(1) at depth t + 1, alone: 32 warp executions of 1 lane.
    base = next(v for v in prof.per_block.values() if v["function"] == "fact" and v["block"] != "bb0"
                and v["instructions"] == 2)
    assert (base["warp_execs"], base["thread_execs"]) == (32, 32)


def test_any_depth_that_fits_and_an_overflow_where_it_does_not():
    # fact(n) needs n frames of 16 bytes: fact(64) fills the 1024-byte default
    # stack exactly; fact(65)'s 65th activation does not fit.
    m = ptxc.parse(FACT, "fact.ptx")
    out = np.zeros(1, np.int32)
    ptxc.launch(m, "k", 1, 1, [out, 64], mode="full")
    assert out[0] == fact_mod(64)
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(m, "k", 1, 1, [out, 65], mode="full")
    msg = e.value.render()
    assert "fact.ptx:8:" in msg and "thread (0,0,0): stack overflow: calling fact needs a " \
        "16-byte frame and 1024 bytes of its 1024-byte stack (cudaLimitStackSize) are in use " \
        "at line 8 (ld.param.b32)" in msg
    ptxc.launch(m, "k", 1, 1, [out, 65], mode="full", stack_size=1040)     # 65 x 16
    assert out[0] == fact_mod(65)
    ptxc.launch(m, "k", 1, 1, [out, 1000], mode="hybrid", stack_size=16000)   # 1000 levels
    with pytest.raises(ptxc.PtxcError, match="stack overflow"):
        ptxc.launch(m, "k", 1, 1, [out, 1000], mode="hybrid", stack_size=15984)
    with pytest.raises(ptxc.PtxcError, match="stack_size must be"):
        ptxc.launch(m, "k", 1, 1, [out, 1], stack_size=-1)


def test_the_first_lane_that_overflows_is_reported():
    # Thread t: fact(50 + t). At depth 65 lanes t >= 15 (fact(65) and up) call
    # again: lane 15 is the first that overflows. Also under memcheck: a
    # stack overflow ends the launch (a hardware exception, not an access).
    m = ptxc.parse(FACT, "fact.ptx")
    for check in (None, "memcheck"):
        with pytest.raises(ptxc.PtxcError, match=r"thread \(15,0,0\): stack overflow"):
            ptxc.launch(m, "k", 1, 32, [np.zeros(32, np.int32), 50], mode="full", check=check)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def test_divergent_recursion_fib():
    # Thread t: fib(5 + t % 5). fib(n) makes calls(n) = 2 fib(n + 1) - 1
    # activations; fib's first block runs once in each: lanes with n = 5..9
    # (7, 7, 6, 6, 6 lanes) make 15, 25, 41, 67, 109 -> 7*15 + 7*25 + 6*41 +
    # 6*67 + 6*109 = 1582. Its deepest chain is 9 frames of 24 bytes.
    m = ptxc.load(RECURSION)
    prof, (out, _) = both(m, "fib_kernel", 32, lambda: [np.zeros(32, np.int32), 5])
    assert list(out) == [fib(5 + t % 5) for t in range(32)]
    assert prof.per_block["_Z3fibi:bb0"]["thread_execs"] == 7 * 15 + 7 * 25 + 6 * 41 + 6 * 67 + 6 * 109
    assert prof.divergent_branch > 0
    # 8 CTAs: hybrid (one CTA per class) and full, 1 and 3 workers: one count
    runs = [ptxc.launch(m, "fib_kernel", 8, 32, [np.zeros(32 * 8, np.int32), 5], mode=mode,
                        threads=threads).counters()
            for mode in ("full", "hybrid") for threads in (1, 3)]
    assert all(r == runs[0] for r in runs)
    assert runs[0]["inst_executed"] == 8 * prof.inst_executed


def test_local_arrays_have_a_frame_per_activation():
    # walk(n, up) = walk(n - 1, &buf[n & 3]) + *up with buf[i] = 10 n + i in
    # walk's own frame: the callee reads the caller's array through the
    # pointer. walk(0, up) = *up; the kernel passes &top, top = 7.
    def walk(n, up):
        return up if n == 0 else walk(n - 1, 10 * n + (n & 3)) + up
    m = ptxc.load(RECURSION)
    _, (out, _) = both(m, "walk_kernel", 32, lambda: [np.zeros(32, np.int32), 4])
    assert list(out) == [walk(4 + t % 3, 7) for t in range(32)]
    # walk(4, 7) = walk(3, 40) + 7 = (walk(2, 33) + 40) + 7 = ... = 11 + 22 + 33 + 40 + 7
    assert out[0] == walk(4, 7) == 113


def test_mutual_recursion():
    # iseven(n) -> isodd(n - 1) -> iseven(n - 2) ...; nvcc inlined the first
    # two levels into the kernel, which calls iseven(n - 2) for n >= 2: n - 1
    # activations of 16 bytes. Thread t: iseven(20 + t) = 1 for even t.
    m = ptxc.load(RECURSION)
    _, (out, _) = both(m, "parity_kernel", 32, lambda: [np.zeros(32, np.int32), 20])
    assert list(out) == [1 - t % 2 for t in range(32)]
    out = np.zeros(1, np.int32)
    ptxc.launch(m, "parity_kernel", 1, 1, [out, 65], mode="full")     # 64 x 16 = 1024
    assert out[0] == 0
    with pytest.raises(ptxc.PtxcError, match="stack overflow"):     # 65 frames
        ptxc.launch(m, "parity_kernel", 1, 1, [out, 66], mode="full")


# ------------------------------------------------------------ applications
@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("stack_apps"))


def test_cuda_limit_stack_size_under_ptxc_run(apps):
    """tests/cuda_apps/recursion.cu: alt(63) takes 64 frames of 16 bytes, the
    whole default stack of 1024 bytes: it runs, alt(63) = 32; alt(64) does
    not fit: the launch fails with cudaErrorLaunchFailure (719); with
    cudaDeviceSetLimit(cudaLimitStackSize, 1040) it fits (alt(64) = 32)."""
    app = apps.build("recursion")
    for mode in ("full", "hybrid"):
        r = run_ptxc(app, "63", mode=mode)
        assert r.returncode == 0, r.proc.stderr[-2000:]
        assert r.proc.stdout.splitlines() == ["default stack 1024", "alt(63) = 32, error 0 (cudaSuccess)"]
    r = run_ptxc(app, "64", mode="full")
    assert r.returncode == 1
    assert r.proc.stdout.splitlines()[-1] == "alt(64) = -1, error 719 (cudaErrorLaunchFailure)"
    assert "stack overflow: calling _Z3alti needs a 16-byte frame" in r.proc.stderr
    r = run_ptxc(app, "64", "1040", mode="full")
    assert r.returncode == 0, r.proc.stderr[-2000:]
    assert r.proc.stdout.splitlines() == ["default stack 1024", "set 1040: 0, stack 1040",
                                          "alt(64) = 32, error 0 (cudaSuccess)"]


def test_stack_overflow_under_ptxc_check(apps):
    """compute-sanitizer's block: "Stack overflow", at the function whose
    frame did not fit, by the thread; one error."""
    app = apps.build("recursion")
    r = subprocess.run([sys.executable, "-m", "ptxc.cli", "check", "--", app, "64"],
                       capture_output=True, text=True, timeout=TIMEOUT, cwd=os.path.dirname(app))
    assert r.returncode == 1
    lines = [x for x in r.stderr.splitlines() if x.startswith("=========")]
    at = lines.index("========= Stack overflow")
    assert lines[at + 1].startswith("=========     at alt(int) in line ")
    assert lines[at + 1].endswith(" of the PTX of fatbin1 (ld.param.u32)")
    assert lines[at + 2] == "=========     by thread (0,0,0) in block (0,0,0)"
    assert lines[-1] == "========= ERROR SUMMARY: 1 error"
