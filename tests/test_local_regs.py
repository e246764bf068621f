"""Local registers (backends/llvm/local_regs.py, issue 25): registers whose
values never leave the node that writes them are written without the masked
merge and, at LLVM O2, kept out of the warp state.

The kernels are tests/cuda/local_regs.cu (``nvcc -ptx -arch=sm_90 -O3
local_regs.cu -o local_regs.sm90.ptx``) and the ALU reference
bench/kernels/collatz.cu. Which registers are local is derived by hand from
the PTX (the comments below say why each one is or is not); the outputs of
every launch are compared with numpy models of the .cu, and the outputs and
counters with local registers on and off, at optimisation level 0 and 2, are
compared with each other.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import jit
from ptxc.backends.llvm.local_regs import local_register_names
from ptxc.backends.llvm import plan as plan_module
from ptxc.backends.llvm.plan import Plan

HERE = os.path.dirname(__file__)
PTX = os.path.join(HERE, "cuda", "local_regs.sm90.ptx")
COLLATZ = os.path.join(HERE, "..", "bench", "kernels", "collatz.ptx")


def locals_of(path: str, kernel: str) -> set[str]:
    module = ptxc.load(path)
    return local_register_names(Plan(module, module.function(kernel)))


def test_collatz_loop_temporaries_are_local():
    # the loop body $L__BB0_3 reads %r19 (phi) and writes seven temporaries
    # read only inside it; %r19/%r20 are loop-carried (phis), %r1 and %r8
    # are read in the next block and %rd1 in $L__BB0_4, every other register
    # is read in its own block
    assert locals_of(COLLATZ, "collatz") == {
        "%r9", "%r10", "%r11", "%r12", "%p1",          # entry block
        "%p2",                                                # $L__BB0_3's guard block
        "%r15", "%p3", "%r16", "%r17", "%p4", "%p5", "%p6",   # the loop body
        "%rd2", "%rd3", "%rd4"}                               # $L__BB0_4


def test_values_read_after_a_barrier_are_not_local():
    # %r5 (the load), %r7, %r8, %rd3 and %rd5 are written before bar.sync and
    # read after it: run_warp returns at the barrier, so they stay in the warp state
    got = locals_of(PTX, "across_barrier")
    assert not got & {"%r5", "%r7", "%r8", "%rd3", "%rd5"}
    assert got == {"%rd1", "%rd2", "%rd4", "%rd6", "%rd7", "%r1", "%r2", "%r3", "%r4", "%r6",
                   "%r9", "%r10", "%r11", "%r12", "%r13", "%r14", "%r15"}


def test_shfl_operands_and_values_leaving_the_block_are_not_local():
    # every shfl operand and result (%r11-%r20, %p2, %p3) is excluded: a shfl
    # reads other lanes; %r1, %r2, %rd1 and %rd2 are read in other blocks, %r21 is a phi
    got = locals_of(PTX, "shfl_branch")
    assert got == {"%rd3", "%rd4", "%rd5", "%rd6", "%rd7", "%rd8", "%rd9",
                   "%r6", "%r7", "%r8", "%r9", "%r10", "%p1"}


# ----------------------------------------------------------- numpy models
def across_barrier_model(x: np.ndarray, block: int) -> np.ndarray:
    t = np.arange(len(x)) % block
    y = x[np.arange(len(x)) - t + (t ^ 1)] * np.int32(5)
    return x * np.int32(7) + y * (y & 5)


def shfl_branch_model(v: np.ndarray, block: int) -> np.ndarray:
    out = np.empty_like(v)
    for i in range(len(v)):
        lane, base = (i % block) % 32, i - (i % block) % 32
        if lane < 16:
            x = lambda k: v[base + k] * np.int32(3) + np.int32(k)       # noqa: E731
            out[i] = x(lane ^ 1) - x(lane)
        else:
            z = lambda k: (v[base + k] ^ np.int32(0x55)) >> 1           # noqa: E731
            src = lane + 2 if (lane - 16) + 2 < 16 else lane
            out[i] = z(src) + z(lane)
    return out


def loop_temps_model(x: np.ndarray):
    x = x.astype(np.uint32).copy()
    s = np.zeros_like(x)
    acc = np.zeros_like(x)
    live = x > 1
    for _ in range(500):
        if not live.any():
            break
        odd = x & np.uint32(1)
        nx = np.where(odd == 1, np.uint32(3) * x + np.uint32(1), x >> np.uint32(1))
        nacc = acc ^ ((nx << (s & np.uint32(7))) + odd)
        x, acc, s = np.where(live, nx, x), np.where(live, nacc, acc), np.where(live, s + 1, s)
        live = live & (x > 1) & (s < 500)
    return acc, s


def cases():
    rng = np.random.default_rng(25)
    n_loop = 1000
    yield ("across_barrier", (3,), (128,),
           lambda: [rng.integers(-1000, 1000, 384).astype(np.int32), np.zeros(384, np.int32)],
           lambda a: [(a[1], across_barrier_model(a[0], 128))])
    for block in (48, 64):
        yield ("shfl_branch", (2,), (block,),
               lambda b=block: [rng.integers(-1 << 20, 1 << 20, 2 * b).astype(np.int32),
                                np.zeros(2 * b, np.int32)],
               lambda a, b=block: [(a[1], shfl_branch_model(a[0], b))])
    yield ("loop_temps", ((n_loop + 95) // 96,), (96,),
           lambda: [rng.integers(0, 1 << 20, n_loop).astype(np.uint32), np.zeros(n_loop, np.uint32),
                    np.zeros(n_loop, np.uint32), n_loop],
           lambda a: list(zip(a[1:3], loop_temps_model(a[0]))))


@pytest.mark.parametrize("level", ["0", "2"])
def test_outputs_and_counters_equal_with_and_without_local_registers(monkeypatch, level):
    monkeypatch.setattr(jit, "ENV_LEVEL", level)
    for kernel, grid, block, make, expect in cases():
        base = make()
        seen = []
        for on in (True, False):
            monkeypatch.setenv("PTXC_LOCAL_REGS", "1" if on else "0")
            args = [a.copy() if isinstance(a, np.ndarray) else a for a in base]
            prof = ptxc.launch(ptxc.load(PTX), kernel, grid, block, args, mode="full")
            for got, want in expect(args):
                np.testing.assert_array_equal(got, want, err_msg=f"{kernel} local={on} O{level}")
            seen.append((prof.counters(), [a for a in args if isinstance(a, np.ndarray)]))
        assert seen[0][0] == seen[1][0], kernel
        for a, b in zip(seen[0][1], seen[1][1]):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("level", ["0", "2"])
def test_collatz_counts_equal_with_and_without_local_registers(monkeypatch, level):
    monkeypatch.setattr(jit, "ENV_LEVEL", level)
    n = 4096 + 77                                   # a partial last warp and CTA
    start = np.arange(1, n + 1, dtype=np.uint64)
    want = np.zeros(n, np.uint32)                   # steps of the .cu's loop, by numpy
    x = start.copy()
    for _ in range(1000):
        live = (x != 1) & (want < 1000)
        if not live.any():
            break
        x = np.where(live, np.where(x & 1, (3 * x + 1) & 0xFFFFFFFF, x >> 1), x)
        want += live
    counters = []
    for on in (True, False):
        monkeypatch.setenv("PTXC_LOCAL_REGS", "1" if on else "0")
        out = np.zeros(n, np.uint32)
        prof = ptxc.launch(ptxc.load(COLLATZ), "collatz", ((n + 255) // 256,), (256,), [out, n, 1],
                           mode="full")
        np.testing.assert_array_equal(out, want)
        counters.append(prof.counters())
    assert counters[0] == counters[1]


def vector_allocas(module, kernel: str, level: int) -> int:
    """How many register slots the generated code keeps in allocas."""
    c = jit.compile_kernel(module, module.function(kernel), "full", level=level, keep_ir=True)
    return sum(1 for line in c.ir_text.splitlines()
               if line.lstrip().startswith("%slot") and " = alloca <32 x " in line)


def test_where_registers_live(monkeypatch):
    # collatz has 16 local registers (above) and 5 more written registers
    # (%rd1, %r1, %r8, %r19, %r20): at O2 a kernel without barriers keeps all
    # 21 in allocas, level 0 only the 16 local ones; above the registers x
    # nodes budget O2 keeps only the local ones too
    assert vector_allocas(ptxc.load(COLLATZ), "collatz", 0) == 16
    assert vector_allocas(ptxc.load(COLLATZ), "collatz", 2) == 21
    monkeypatch.setattr(plan_module, "PROMOTE_BUDGET", 0)
    assert vector_allocas(ptxc.load(COLLATZ), "collatz", 2) == 16
    # a kernel with a barrier keeps its non-local registers in the warp state
    got = vector_allocas(ptxc.load(PTX), "across_barrier", 2)
    assert got == len(locals_of(PTX, "across_barrier"))
