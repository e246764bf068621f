"""A kernel whose native frame is larger than a thread's default stack runs
(backends/llvm/frames.py measures the frame, stacks.py sizes the executor
threads): tests/cuda/wmma_band.cu, 128 fully unrolled wmma.mma (nvcc -ptx
-arch=sm_90 -O3, tests/cuda/build.sh). Before issue 29 its level-0 frame
was 11 MB, the executor thread's 8 MiB stack overflowed and the ptxc
process died with SIGSEGV. The out-of-line matrix helpers (ops/mma.py,
helper_lib.py) brought the frame down to about 36 KB, so the tests now
shrink the default stack below the frame (32 KiB, Python's minimum thread
stack) instead: sized threads run the kernel, unsized ones overflow for
real and the crash is reported. Its output is checked with numpy: C = A B^T
of the half inputs, accumulated in float (tolerance: float32 sums of 2048
products in [0, 1)).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import frames, stacks

PTX = os.path.join(os.path.dirname(__file__), "cuda", "wmma_band.sm90.ptx")
K = 2048
SMALL_STACK = 32 << 10      # Python's smallest thread stack (threading.stack_size)


def test_prologue_frame_patterns():
    """The three x86-64 frame allocations frames.py reads."""
    assert frames.prologue_frame(bytes.fromhex("55 4889e5 4881ec 00100000 c3")) == 4096
    assert frames.prologue_frame(bytes.fromhex("4883ec 28 c3")) == 0x28
    assert frames.prologue_frame(bytes.fromhex("48b8 0000008001000000 4829c4")) == 0x180000000
    assert frames.prologue_frame(bytes.fromhex("c3")) == 0


def test_object_frames_of_llvm_code():
    """An object LLVM emits: run_warp_a allocates a 400,000-byte array and
    calls the helper h (1,200 bytes); run_warp_b is a second kernel. Each
    kernel's bound is its frame plus the helpers', never the other
    kernel's."""
    import platform
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("frames.py reads x86-64 prologues")
    from ptxc.backends.llvm.jit import llvm, new_target_machine
    b = llvm()
    text = """
define internal i32 @h(i32 %n) noinline {
  %a = alloca [300 x i32]
  %p = getelementptr [300 x i32], ptr %a, i32 0, i32 %n
  store volatile i32 1, ptr %p
  %v = load volatile i32, ptr %p
  ret i32 %v
}
define i32 @run_warp_a(i32 %n) {
  %a = alloca [100000 x i32]
  %p = getelementptr [100000 x i32], ptr %a, i32 0, i32 %n
  store volatile i32 1, ptr %p
  %v = load volatile i32, ptr %p
  %w = call i32 @h(i32 %v)
  ret i32 %w
}
define i32 @run_warp_b(i32 %n) {
  %w = call i32 @h(i32 %n)
  ret i32 %w
}
"""
    obj = new_target_machine(0).emit_object(b.parse_assembly(text))
    got = frames.object_frames(obj)
    assert 1200 <= got["h"] < 1200 + frames.SLACK
    assert 401_200 <= got["run_warp_a"] < 401_200 + 2 * frames.SLACK
    assert 1200 <= got["run_warp_b"] < 1200 + 2 * frames.SLACK


def test_stack_sizes(monkeypatch):
    monkeypatch.setattr(stacks, "default_stack", lambda: 8 << 20)
    assert stacks.stack_bytes(0) == 8 << 20                 # the default stack
    assert stacks.stack_bytes(11 << 20) == 15 << 20         # frame + 4 MiB
    assert stacks.stack_bytes((11 << 20) + 1) == 16 << 20   # rounded up to a MiB
    assert stacks.stack_bytes(None) == (256 + 4) << 20


def test_frame_over_8_mib_runs():
    m = ptxc.load(PTX)
    rng = np.random.default_rng(29)
    a = rng.random((16, K)).astype(np.float16)
    b = rng.random((16, K)).astype(np.float16)
    c = np.zeros((16, 16), np.float32)
    ptxc.launch(m, "wmma_band", grid=1, block=32, args=[a, b, c], mode="full")
    compiled = next(iter(m.attrs["llvm_jit_cache"].values()))
    if compiled.frame_bytes is None:
        pytest.skip("frames.py measures x86-64 code only")
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, want, rtol=1e-4)


def _run_on_small_stacks(sized: bool):
    """wmma_band in a child process whose threads' default stack is 32 KiB
    (below the kernel's frame); ``sized``: stacks.py sizes the executor
    threads from the frame as usual, else every thread gets 32 KiB."""
    import subprocess
    import sys
    code = ("import numpy as np, ptxc\n"
            "from ptxc.backends.llvm import stacks\n"
            + (f"stacks.default_stack = lambda: {SMALL_STACK}\n" if sized else
               # every thread asks for SMALL_STACK (start_threads asks only above the default)
               f"stacks.default_stack = lambda: 0\nstacks.stack_bytes = lambda frame: {SMALL_STACK}\n") +
            f"m = ptxc.load({PTX!r})\n"
            f"a = np.ones((16, {K}), np.float16)\n"
            "c = np.zeros((16, 16), np.float32)\n"
            "ptxc.launch(m, 'wmma_band', grid=1, block=32, args=[a, a, c], mode='full')\n"
            "f = next(iter(m.attrs['llvm_jit_cache'].values())).frame_bytes\n"
            "print('finished', f, float(c.min()), float(c.max()))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)


def test_frame_over_the_default_stack_runs_on_a_sized_thread():
    """With a 32 KiB default, the executor thread gets frame + 4 MiB: the
    kernel runs; every element of ones(16, 2048) ones^T is 2048."""
    p = _run_on_small_stacks(sized=True)
    assert p.returncode == 0, p.stderr
    _, frame, lo, hi = p.stdout.split()
    if int(frame) <= SMALL_STACK:
        pytest.skip(f"the frame ({frame} bytes) fits {SMALL_STACK} bytes: nothing to size")
    assert float(lo) == float(hi) == K


def test_overflow_of_a_small_stack_is_reported():
    """The same kernel on threads of a 32 KiB stack (stack sizing switched
    off): the overflow is a real SIGSEGV on the stack's guard page, reported
    from the alternate signal stack naming the kernel (exit 70), not a
    silent death."""
    p = _run_on_small_stacks(sized=False)
    if p.returncode == 0:
        frame = int(p.stdout.split()[1])
        assert frame <= SMALL_STACK, p.stdout
        pytest.skip(f"the frame ({frame} bytes) fits {SMALL_STACK} bytes now")
    assert p.returncode == 70, p.stderr
    assert ("ptxc: internal error: the ptxc process crashed (SIGSEGV) while running kernel "
            "wmma_band (grid (1, 1, 1), block (32, 1, 1))") in p.stderr
