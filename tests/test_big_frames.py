"""A kernel whose native frame is larger than a thread's default 8 MiB
stack runs (backends/llvm/frames.py measures the frame, stacks.py sizes the
executor threads): tests/cuda/wmma_band.cu, 128 fully unrolled wmma.mma
(nvcc -ptx -arch=sm_90 -O3, tests/cuda/build.sh). Before, the executor
thread's stack overflowed and the ptxc process died with SIGSEGV (issue
29). Its output is checked with numpy: C = A B^T of the half inputs,
accumulated in float (tolerance: float32 sums of 2048 products in [0, 1)).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import frames, stacks

PTX = os.path.join(os.path.dirname(__file__), "cuda", "wmma_band.sm90.ptx")
K = 2048
EIGHT_MIB = 8 << 20


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
    if compiled.frame_bytes <= EIGHT_MIB:
        pytest.skip(f"the wmma lowering's frame is now {compiled.frame_bytes} bytes, below 8 MiB: "
                    f"this test no longer overflows a default stack")


def test_overflow_of_a_small_stack_is_reported():
    """The same kernel on threads of the default 8 MiB stack (stack sizing
    switched off): the overflow is a real SIGSEGV on the stack's guard page,
    reported from the alternate signal stack naming the kernel (exit 70),
    not a silent death."""
    import subprocess
    import sys
    code = ("import numpy as np, ptxc\n"
            "from ptxc.backends.llvm import stacks\n"
            "stacks.stack_bytes = lambda frame: 8 << 20\n"
            "stacks.default_stack = lambda: 8 << 20\n"
            f"m = ptxc.load({PTX!r})\n"
            f"a = np.ones((16, {K}), np.float16)\n"
            "c = np.zeros((16, 16), np.float32)\n"
            "ptxc.launch(m, 'wmma_band', grid=1, block=32, args=[a, a, c], mode='full')\n"
            "f = next(iter(m.attrs['llvm_jit_cache'].values())).frame_bytes\n"
            "print('finished', f)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    if p.returncode == 0:
        frame = int(p.stdout.split()[-1])
        assert frame <= EIGHT_MIB, p.stdout
        pytest.skip(f"the frame ({frame} bytes) fits 8 MiB now")
    assert p.returncode == 70, p.stderr
    assert ("ptxc: internal error: the ptxc process crashed (SIGSEGV) while running kernel "
            "wmma_band (grid (1, 1, 1), block (32, 1, 1))") in p.stderr
