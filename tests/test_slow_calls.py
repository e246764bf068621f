"""The per-lane arm of fast-path accesses out of line
(backends/llvm/ops/slow_access.py) against the inline arm it replaces
(PTXC_LEVEL0_CALLS=0): the same bytes, counters, memory counters and first
fault (thread, kind, address), in level-0 code, where the arms and the
lane-shape test are calls (the shape test a helper-library entry); code generated for O2
has their code inline (checked below), the code the switch's other setting
gives.

Every kernel below takes the arm in some warps: a strided, a descending and
a masked global access, a v2 load (two values through the helper's buffer),
.shared reads that wrap around a tile, a .const table at ``i % 4``, stores
out of bounds of a global and of a .shared buffer, misaligned .shared
stores, and a store whose pointer overflowed into the next buffer (the
provenance check passed to the helper as arguments). The fast path is
forced on every access (PTXC_FAST_MEM=always) so that accesses the
lane-stride hint leaves per-lane get an arm too. Kernels: tests/cuda/
fast_access.cu, outlined_checks.cu, module_vars.cu, provenance.cu (nvcc
PTX); expected buffers are computed with numpy from their source, or by hand.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import jit
from ptxc.launcher.api import launch_segments
from compile_probe import emitted_names
from switches import each_setting
from test_outlined import SHARED_AT_FAULTS

HERE = Path(__file__).parent / "cuda"
FAST = HERE / "fast_access.sm90.ptx"
CHECKS = HERE / "outlined_checks.sm90.ptx"
CONST = HERE / "module_vars.sm90.ptx"
PROV = HERE / "provenance.sm90.ptx"


@pytest.fixture
def forced(monkeypatch):
    monkeypatch.setenv("PTXC_FAST_MEM", "always")
    return monkeypatch


def both(monkeypatch, run):
    """[outlined, inline] results of ``run()`` in level-0 code (forced as
    PTXC_OPT=0 does: jit.ENV_LEVEL, read when jit is imported)."""
    monkeypatch.setattr(jit, "ENV_LEVEL", "0")
    return each_setting(monkeypatch, "PTXC_LEVEL0_CALLS", ("1", "0"), run)


def test_level_is_forced(forced):
    """The level the tests below force is the level of the code that runs."""
    forced.setattr(jit, "ENV_LEVEL", "0")
    m = ptxc.load(str(FAST))
    ptxc.launch(m, "copy_n", (1,), (32,), [np.arange(32, dtype=np.int32), np.zeros(32, np.int32), 32],
                mode="full")
    assert [key[2] for key in m.attrs["llvm_jit_cache"]] == [0]


def launch(path, kernel, grid, block, args, **kw):
    return ptxc.launch(ptxc.load(str(path)), kernel, grid, block, args, mode="full",
                       memory_counters=True, **kw)


def fault(bufs: list, go) -> tuple[str, list]:
    """(the error's text, the bytes of ``bufs``) of ``go()``, a launch that must fail."""
    with pytest.raises(ptxc.PtxcError) as e:
        go()
    return str(e.value), [b.tobytes() for b in bufs]


def ir_of(path, kernel) -> str:
    m = ptxc.load(str(path))
    return jit.compile_kernel(m, m.function(kernel), "full", 0, keep_ir=True).ir_text


# ------------------------------------------------------------ the code
def test_switch_changes_code(forced):
    """The arms are calls of helpers (one per access form in each module),
    none with the switch off: the tests below compare different code."""
    outl, inl = each_setting(forced, "PTXC_LEVEL0_CALLS", ("1", "0"), lambda: ir_of(FAST, "vectors"))
    for form in ("ld_global_f32x4_p", "st_global_f32x4_p", "ld_global_f32x2_p", "st_global_f32x2_p"):
        assert calls(outl, f"@ptxc_slow_{form}("), form
    assert "@ptxc_slow_" not in inl and "@ptxc_shapes" not in inl
    assert outl.count("fslow") == inl.count("fslow") > 0        # the same fast paths


def test_level0_calls_and_optimised_code_inlines(forced):
    """Level-0 code calls the shape test and the arms, which level 0's IR
    passes (jit._promote: the always-inliner, SROA) leave as calls; code
    generated for O2 (a hot kernel's) has them inline."""
    text = ir_of(FAST, "shapes")
    low = jit.llvm().parse_assembly(text)
    jit._promote(low)
    assert calls(str(low), "@ptxc_slow_") and calls(str(low), "@ptxc_shapes4_")   # the entry's symbol
    m = ptxc.load(str(FAST))
    high = jit.compile_kernel(m, m.function("shapes"), "full", 2, keep_ir=True).ir_text
    assert "@ptxc_slow_" not in high and "@ptxc_shapes" not in high
    assert high.count("fslow") == text.count("fslow") > 0


def test_shape_test_compiled_once_per_process(forced):
    """The shape test is a helper-library entry: a second kernel calling it
    does not compile it again (helper_lib.py); the arms are the kernel's own."""
    emitted = emitted_names(forced)
    for kernel in ("copy_n", "offsets"):       # 4-byte global accesses: the same helpers
        m = ptxc.load(str(FAST))
        text = jit.compile_kernel(m, m.function(kernel), "full", 0, keep_ir=True).ir_text
        assert "define internal i32 @ptxc_slow_ld_global_i32x1_p(" in text
    assert emitted.count("ptxc_shapes4") == 1


def calls(text: str, callee: str) -> int:
    return sum(1 for line in text.splitlines() if " call " in line and callee in line)


def test_loaded_pointer_keeps_the_inline_arm():
    """A store through a pointer loaded from memory has a per-lane provenance
    expectation: its arm stays inline; through a parameter's field it is a call."""
    assert "@ptxc_slow_st_global" not in ir_of(PROV, "pair_copy")
    assert calls(ir_of(PROV, "pair_copy_by_value"), "@ptxc_slow_st_global_f32x1_p(")


# ------------------------------------------------------------ the behaviour
def test_global_arms_same_bytes_and_counters(forced):
    n, stride = 1000, 3
    rng = np.random.default_rng(5)
    inp = rng.random(n).astype(np.float32)

    def run():
        args = [inp.copy(), np.zeros(n + n // 5 + 1, np.float32), n, stride]
        return args[1], launch(FAST, "shapes", ((n + 127) // 128,), (128,), args)
    (o1, p1), (o2, p2) = both(forced, run)
    i = np.arange(n)
    d = np.where(i & 3, inp[n - 1 - i], 0).astype(np.float32)
    want = np.zeros(n + n // 5 + 1, np.float32)
    want[:n] = inp + np.float32(2) * inp[0] + np.float32(4) * inp[(i * stride) % n] + np.float32(8) * d
    want[n + i[i % 5 == 0] // 5] = inp[i % 5 == 0]
    np.testing.assert_allclose(o1, want, rtol=1e-6)
    assert o1.tobytes() == o2.tobytes()
    assert p1.counters() == p2.counters() and p1.memory == p2.memory


def test_vector_arms_same_bytes(forced):
    n = 100
    rng = np.random.default_rng(1)
    v4, v2 = rng.random(4 * n).astype(np.float32), rng.random(2 * n).astype(np.float32)

    def run():
        args = [v4.copy(), np.zeros(4 * n, np.float32), v2.copy(), np.zeros(2 * n, np.float32), n]
        return args, launch(FAST, "vectors", (2,), (64,), args)
    (a1, p1), (a2, p2) = both(forced, run)
    np.testing.assert_array_equal(a1[1].reshape(n, 4), v4.reshape(n, 4)[:, ::-1])
    u = v2.reshape(n, 2)[::-1]
    np.testing.assert_allclose(a1[3].reshape(n, 2), np.stack([u[:, 1] + v2[0], u[:, 0]], 1), rtol=1e-6)
    assert a1[1].tobytes() == a2[1].tobytes() and a1[3].tobytes() == a2[3].tobytes()
    assert p1.counters() == p2.counters() and p1.memory == p2.memory


def test_shared_and_const_arms_same_bytes(forced):
    ctas = 3
    inp = np.arange(64 * ctas, dtype=np.int32) * 3 - 50

    def run():
        args = [inp.copy(), np.zeros(64 * ctas, np.int32), np.full(ctas, -1, np.int32)]
        prof = launch(FAST, "tiles", (ctas,), (64,), args)
        out = np.zeros(70, np.int32)
        table = launch(CONST, "bump", (1,), (96,), [out, 70])
        return args, prof, out, table
    (a1, p1, c1, t1), (a2, p2, c2, t2) = both(forced, run)
    tile = inp.reshape(ctas, 64)
    t = np.arange(64)
    want = sum(tile[:, k:k + 1] * tile[:, (t + k) & 63] for k in range(0, 64, 8)) + tile[:, 63 - t]
    np.testing.assert_array_equal(a1[1].reshape(ctas, 64), want)
    np.testing.assert_array_equal(a1[2], [63] * ctas)
    # table[i % 4] + launches_seen: thread 0's atomicAdd runs before any read (warp 0 first)
    np.testing.assert_array_equal(c1, np.array([10, 20, 30, 40])[np.arange(70) % 4] + 1)
    assert [a.tobytes() for a in a1[1:]] == [a.tobytes() for a in a2[1:]] and c1.tobytes() == c2.tobytes()
    assert p1.counters() == p2.counters() and p1.memory == p2.memory
    assert t1.counters() == t2.counters() and t1.memory == t2.memory


def test_global_fault_in_the_arm(forced):
    """copy_n over 65 ints of a 64-int buffer: lane 0 of warp 2 (thread 64)
    reads past the end; warps 0 and 1 wrote in + 1 before it."""
    def run():
        out = np.zeros(128, np.int32)
        return fault([out], lambda: launch(FAST, "copy_n", (1,), (128,),
                                           [np.arange(64, dtype=np.int32), out, 65]))
    (m1, b1), (m2, b2) = both(forced, run)
    assert m1 == m2 and b1 == b2
    assert "thread (64,0,0)" in m1 and "out-of-bounds access at line 277 (ld.global.u32)" in m1
    np.testing.assert_array_equal(np.frombuffer(b1[0], np.int32)[:64], np.arange(1, 65))


@pytest.mark.parametrize("stride,off,block,thread,kind", SHARED_AT_FAULTS)
def test_shared_fault_in_the_arm(forced, stride, off, block, thread, kind):
    def run():
        out = np.full(block, 7, np.int32)
        return fault([out], lambda: launch(CHECKS, "shared_at", (1,), (block,), [out, stride, off]))
    (m1, b1), (m2, b2) = both(forced, run)
    assert m1 == m2 and b1 == b2
    assert f"thread ({thread},0,0)" in m1 and kind in m1


def test_provenance_fault_in_the_arm(monkeypatch):
    """pair_copy_by_value stores to dst[t + 2^30]: 4 GiB past dst (segment
    9), byte 0 of the next buffer (segment 10). The fast path's range test
    passes (one segment, in bounds), its provenance test fails, and the arm
    (its expected segment 9 passed as arguments) reports thread 0 at
    0xa00000000 before any byte of ``next`` is written."""
    src, dst, nxt = 8, 9, 10
    le = lambda v: int(v).to_bytes(8, "little")   # noqa: E731

    def run():
        segs = {src: np.arange(1, 5, dtype=np.float32).view(np.uint8).copy(),
                dst: np.zeros(16, np.uint8), nxt: np.zeros(16, np.uint8)}
        return fault([segs[dst], segs[nxt]], lambda: launch_segments(
            ptxc.load(str(PROV)), "pair_copy_by_value", (1, 1, 1), (4, 1, 1),
            le(src << 32) + le(dst << 32) + le(1 << 30), segs, mode="full"))
    (m1, b1), (m2, b2) = both(monkeypatch, run)
    assert m1 == m2 and b1 == b2
    assert "thread (0,0,0): out-of-bounds" in m1 and f"address 0x{nxt << 32:x}" in m1
    assert b1[1] == bytes(16)
