"""Hybrid runs stop where full runs stop (docs/slice.md, ``faults``).

A hybrid run performs only the accesses its branch slice keeps; with the
default ``faults=checked`` it still checks every other access (bounds,
null, alignment, and the allocation the address started from), so a launch
whose full run stops at a bad access stops in hybrid mode too, with the same
message, and a launch that runs cleanly gives the full run's counters.
``check_faults=False`` / ``slice{faults=unchecked}`` gives the checks up.

Kernels: tests/cuda/hybrid_faults.cu (nvcc -ptx -arch=sm_90 -O3). Every
expected thread and address below is derived by hand in the comments.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
from ptxc.launcher.api import launch
from ptxc.launcher.api import launch_segments

PTX = Path(__file__).resolve().parent / "cuda" / "hybrid_faults.sm90.ptx"
BASE = SEG_FIRST_BUFFER << 32           # the first buffer argument: 0x600000000


@pytest.fixture(scope="module")
def m():
    return ptxc.load(PTX)


def error_of(module, kernel, grid, block, make_args, **kw) -> str:
    with pytest.raises(ptxc.PtxcError) as e:
        launch(module, kernel, grid, block, make_args(), **kw)
    return str(e.value)


def same_error_all_modes(module, kernel, grid, block, make_args) -> str:
    """The message of the full run; the hybrid run (CTA classes on and off)
    must give exactly the same one."""
    full = error_of(module, kernel, grid, block, make_args, mode="full")
    assert error_of(module, kernel, grid, block, make_args) == full
    assert error_of(module, kernel, grid, block, make_args, cta_equivalence=False) == full
    return full


def ints(n):
    return np.arange(n, dtype=np.int32)


# ------------------------------------------------------- out of bounds
def test_out_of_bounds_load_in_the_last_cta(m):
    """scale_tid, grid 4 x 32, m = 32 (every thread accesses), in and out
    of 100 ints: thread i = 32c + t reads in[i] first (line 39). CTAs 0..2
    stay below 96; in CTA 3, t = 4 reads in[100], 400 bytes from in's base,
    right after its end. Neither access is in the branch slice (the branch
    tests threadIdx.x)."""
    msg = same_error_all_modes(m, "scale_tid", 4, 32, lambda: [ints(100), ints(100), 32])
    assert "kernel scale_tid, CTA (3,0,0), thread (4,0,0): out-of-bounds access at line 39 " \
           "(ld.global.u32)" in msg
    assert f"address 0x{BASE + 400:x} (right after the end of buffer of parameter " \
           f"scale_tid_param_0 (400 bytes at 0x{BASE:x}))" in msg


def test_opting_out_gives_the_checks_up(m):
    """check_faults=False: the hybrid run does not check the skipped
    accesses, so it finishes with counters where the full run stops (what
    the option gives up). The counters are those of a clean launch with
    buffers of 128 ints (the counters do not depend on the data)."""
    prof = launch(m, "scale_tid", 4, 32, [ints(100), ints(100), 32], check_faults=False)
    clean = launch(m, "scale_tid", 4, 32, [ints(128), ints(128), 32], mode="full")
    assert prof.counters() == clean.counters()
    # one class: every CTA takes the same branches (tid < 32 for all)
    assert prof.ctas_run == 1


@pytest.mark.parametrize("n, m_, ctas_run", [
    # buffers of 128 ints: every address is in bounds in every CTA: one class
    (128, 32, 1),
    # 100 ints but only threads t < 4 access: CTA 3 reaches in[99] at most,
    # so nothing faults; CTA 3's lanes 4..31 *would* fault (addresses past
    # the end) but never execute the access: its fault bits differ from CTAs
    # 0..2, so it is a class of its own: 2 classes
    (100, 4, 2),
])
def test_clean_launches_equal_full(m, n, m_, ctas_run):
    full_out = np.zeros(n, np.int32)
    full = launch(m, "scale_tid", 4, 32, [ints(n), full_out, m_], mode="full")
    hybrid = launch(m, "scale_tid", 4, 32, [ints(n), np.zeros(n, np.int32), m_])
    every = launch(m, "scale_tid", 4, 32, [ints(n), np.zeros(n, np.int32), m_],
                   cta_equivalence=False)
    assert hybrid.counters() == every.counters() == full.counters()
    assert hybrid.ctas_run == ctas_run and every.ctas_run == 4
    want = np.zeros(n, np.int32)
    idx = np.array([32 * c + t for c in range(4) for t in range(m_) if 32 * c + t < n])
    want[idx] = 2 * idx
    assert (full_out == want).all()


def test_null_pointer(m):
    """out = 0 (a null pointer), grid 1, m = 32: thread 0 loads in[0] (fine)
    and stores to address 0 + 4 * 0 = 0x0 at line 43."""
    msg = same_error_all_modes(m, "scale_tid", 1, 32, lambda: [ints(32), 0, 32])
    assert "CTA (0,0,0), thread (0,0,0): out-of-bounds access at line 43 (st.global.u32), " \
           "address 0x0 (no buffer: a null or wild pointer)" in msg


def test_misaligned_store(m):
    """skewed_store with skew 2: thread 0 stores at out + 2, not a multiple
    of 4 (line 66)."""
    msg = same_error_all_modes(m, "skewed_store", 1, 32, lambda: [ints(64), 2])
    assert "thread (0,0,0): misaligned access at line 66 (st.global.u32), " \
           f"address 0x{BASE + 2:x}" in msg


# ------------------------------------------- offsets never carry over
def test_store_4_gib_past_a_does_not_write_b(m):
    """carry_store: a[t + 2^30] is 4 * 2^30 = 4 GiB past a[t]; a's segment
    is 6, so the address 6 << 32 + 2^32 + 4t is (7 << 32) + 4t: b's buffer.
    Thread 0 stores first (line 93) at 0x700000000, which must fail as out
    of bounds of a (2^32 - 16 bytes after a's 16 bytes), and b must stay
    untouched."""
    for mode in ("full", "hybrid"):
        a, b = np.zeros(4, np.int32), np.zeros(4, np.int32)
        with pytest.raises(ptxc.PtxcError) as e:
            launch(m, "carry_store", 1, 4, [a, b, 1 << 30], mode=mode)
        msg = str(e.value)
        assert "thread (0,0,0): out-of-bounds access at line 93 (st.global.u32), " \
               f"address 0x{BASE + (1 << 32):x}" in msg, mode
        assert f"it was computed from buffer of parameter carry_store_param_0 (16 bytes at " \
               f"0x{BASE:x}) and lies {(1 << 32) - 16} bytes after the end of it" in msg, mode
        assert (b == 0).all() and (a == 0).all()


def test_carry_under_memcheck(m):
    """memcheck records the 4 carried stores (threads 0..3, line 93), says
    where they started from, and drops them: b stays 0."""
    a, b = np.zeros(4, np.int32), np.zeros(4, np.int32)
    prof = launch(m, "carry_store", 1, 4, [a, b, 1 << 30], mode="full", check="memcheck")
    assert prof.mem_error_count == 4 and (b == 0).all()
    err = prof.mem_errors[0]
    assert (err.line, err.error, err.thread, err.count) == (93, "out-of-bounds", (0, 0, 0), 4)
    assert f"it was computed from buffer of parameter carry_store_param_0 (16 bytes at " \
           f"0x{BASE:x}) and lies {(1 << 32) - 16} bytes after the end of it" in err.where


def test_in_bounds_64_bit_index_runs(m):
    """skip = 0: a[t] = 7 for t < 4; b = 0 so the branch is not taken."""
    a, b = np.zeros(4, np.int32), np.zeros(4, np.int32)
    full = launch(m, "carry_store", 1, 4, [a, b, 0], mode="full")
    hybrid = launch(m, "carry_store", 1, 4, [np.zeros(4, np.int32), b, 0])
    assert (a == 7).all() and full.counters() == hybrid.counters()


def test_loaded_pointer_checked_in_its_segment(m):
    """through_table: p = table[0] is loaded from memory (provenance
    unknown); with k = 2^30 the offset 4 * 2^30 carries p (segment 7) into
    segment 8, which does not exist: out of bounds in both modes, at thread
    0, address (8 << 32)."""
    table = np.array([(SEG_FIRST_BUFFER + 1) << 32], np.uint64).view(np.uint8)
    target = np.zeros(16, np.uint8)
    params = (SEG_FIRST_BUFFER << 32).to_bytes(8, "little") + (1 << 30).to_bytes(4, "little")
    msgs = []
    for mode in ("full", "hybrid"):
        with pytest.raises(ptxc.PtxcError) as e:
            launch_segments(m, "through_table", (1, 1, 1), (4, 1, 1), params + bytes(4),
                            {SEG_FIRST_BUFFER: table, SEG_FIRST_BUFFER + 1: target}, mode=mode)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert f"thread (0,0,0): out-of-bounds access at line 129 (st.global.u32), " \
           f"address 0x{(SEG_FIRST_BUFFER + 2) << 32:x}" in msgs[0]


# .address_size 32: nvcc no longer emits 32-bit PTX (-m32 was removed), so
# this kernel is written by hand in the form nvcc 10 produced: a pointer
# plus a byte offset. Segments are 16 MiB (SHIFT 24): a + 2^24 is b.
PTX32 = """
.version 6.5
.target sm_50
.address_size 32

.visible .entry carry32(.param .u32 a, .param .u32 b, .param .u32 skip)
{
    .reg .b32 %r<8>;
    ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [skip];
    mov.u32 %r3, %tid.x;
    shl.b32 %r4, %r3, 2;
    add.s32 %r5, %r1, %r4;
    add.s32 %r6, %r5, %r2;
    st.global.u32 [%r6], %r4;
    ret;
}
"""


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_address_size_32_carry(mode):
    """a + 4t + 2^24: a's segment 6 is 0x6000000 (6 << 24); 2^24 later is
    segment 7, b. Thread 0 stores at 0x7000000: 2^24 - 16 bytes after the
    end of a's 16 bytes (line 15 of the text above: it starts with a newline)."""
    m32 = ptxc.parse(PTX32, "carry32.ptx")
    a, b = np.zeros(4, np.int32), np.zeros(4, np.int32)
    with pytest.raises(ptxc.PtxcError) as e:
        launch(m32, "carry32", 1, 4, [a, b, 1 << 24], mode=mode)
    msg = str(e.value)
    assert "thread (0,0,0): out-of-bounds access at line 15 (st.global.u32), " \
           "address 0x7000000" in msg
    assert f"lies {(1 << 24) - 16} bytes after the end of it" in msg
    assert (b == 0).all()
    launch(m32, "carry32", 1, 4, [a, b, 0], mode=mode)       # in bounds: runs
    if mode == "full":
        assert (a == 4 * np.arange(4)).all()


# --------------------------------------------------------- the CLI
def test_readme_pipeline_stops_like_full(tmp_path):
    """`ptxc opt --pass=slice,count` (the README's pipeline) exits 1 with the
    full run's message; slice{faults=unchecked} runs (exit 0)."""
    from click.testing import CliRunner
    from ptxc.cli.main import cli
    launch_args = ["--kernel", "scale_tid", "--grid", "4", "--block", "32",
                   "--arg", "0=zeros:i32:100", "--arg", "1=zeros:i32:100", "--arg", "2=32",
                   str(PTX)]
    full = CliRunner().invoke(cli, ["opt", "--pass=count", "--mode", "full", *launch_args])
    hybrid = CliRunner().invoke(cli, ["opt", "--pass=slice,count", *launch_args])
    assert full.exit_code == hybrid.exit_code == 1
    assert "CTA (3,0,0), thread (4,0,0): out-of-bounds access at line 39" in full.output
    assert hybrid.output == full.output
    fast = CliRunner().invoke(cli, ["opt", "--pass=slice{faults=unchecked},count", *launch_args])
    assert fast.exit_code == 0, fast.output
    assert "inst_executed" in fast.output
