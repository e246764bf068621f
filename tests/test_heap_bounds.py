"""memcheck bounds every device-heap block (instruments/memcheck_heap.py):
an access must stay inside the bytes its malloc asked for, as an access to a
cudaMalloc allocation must stay inside it; a heap made for memcheck keeps 16
free bytes after each block (ops/device_heap.py), so that an overrun of a
block whose size is a multiple of 16 does not land in the next one. It used
to report nothing (the heap was one allocation). tests/cuda/heap_bounds.cu;
every count is derived by hand in the comments."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.ops.device_heap import DeviceHeap
from ptxc.check.memcheck import sanitizer_text
from ptxc.launcher.api import launch_segments
from runtime_apps import TIMEOUT, AppBuilder, run_ptxc

PTX = Path(__file__).parent / "cuda" / "heap_bounds.sm90.ptx"
HEAP = 0x700000000          # launch(): the buffer `keep` is segment 6, the heap 7


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def over(module, n, extra, threads=4, check="memcheck"):
    keep = np.zeros(threads, np.uint64)
    return ptxc.launch(module, "over", 1, threads, [n, extra, keep], mode="full", check=check), keep


def test_one_int_past_a_20_byte_block(module):
    # malloc(20) per thread, p[5] written: bytes 20..23 of each block, 4 errors.
    prof, keep = over(module, 5, 1)
    assert prof.mem_error_count == 4
    [e] = prof.mem_errors
    assert (e.kind, e.error, e.size, e.thread) == ("store", "out-of-bounds", 4, (0, 0, 0))
    assert e.address == HEAP + 20
    assert e.where == f"right after the end of a device malloc block (20 bytes at 0x{HEAP:x})"
    # blocks: 20 bytes -> 32 + a 16-byte red zone: 48 apart
    assert [int(k) for k in keep] == [HEAP + 48 * t for t in range(4)]
    text = sanitizer_text(prof.mem_errors, prof.mem_error_count)
    assert "Address 0x700000014 is out of bounds\n=========     and is right after the end of a " \
           "device malloc block (20 bytes at 0x700000000)" in text


def test_one_int_past_a_16_byte_block(module):
    # malloc(16), p[4]: bytes 16..19, the red zone after the block: 4 errors.
    prof, _ = over(module, 4, 1)
    assert prof.mem_error_count == 4 and prof.mem_errors[0].address == HEAP + 16
    # two ints past 32-byte blocks, 2 threads: p[8], p[9] each: 4 errors
    prof, _ = over(module, 8, 2, threads=2)
    assert prof.mem_error_count == 4


def test_in_bounds_and_without_memcheck(module):
    assert over(module, 4, 0)[0].mem_error_count == 0
    prof, keep = over(module, 5, 1, check=None)       # the heap is one allocation there
    assert [int(k) for k in keep] == [HEAP + 32 * t for t in range(4)]   # no red zone


def test_blocks_kept_across_launches_and_use_after_free(module):
    # A heap kept by the caller (as ptxc run does): `over` fills 5-int blocks,
    # sum_free reads them in bounds (sum 0..4 = 10) and frees them, after_free
    # reads each freed block's first int: 4 errors in free heap memory.
    heap = DeviceHeap(8, np.zeros(4096, np.uint8), redzone=16)
    keep, out = np.zeros(32, np.uint8), np.zeros(16, np.uint8)
    segs = {6: keep, 7: out, 8: heap.array}

    def run(kernel, params):
        return launch_segments(module, kernel, (1, 1, 1), (4, 1, 1), params, segs, mode="full",
                               check="memcheck", heap=heap)
    assert run("over", struct.pack("<iiQ", 5, 0, 6 << 32)).mem_error_count == 0
    assert run("sum_free", struct.pack("<iiQQ", 5, 0, 6 << 32, 7 << 32)).mem_error_count == 0
    assert list(out.view(np.int32)) == [10] * 4 and heap.used == {}
    prof = run("after_free", struct.pack("<QQ", 6 << 32, 7 << 32))
    assert prof.mem_error_count == 4
    assert prof.mem_errors[0].where == "in free device-heap memory (no malloc block)"


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("heap_bounds_apps"))


def test_heap_overrun_under_ptxc_check(apps):
    """tests/cuda_apps/heap_overrun.cu: 4 threads write one int past their
    20-byte blocks: ptxc check reports 4 errors; ptxc run runs on (a
    plain run bounds the heap as a whole)."""
    app = apps.build("heap_overrun")
    r = run_ptxc(app, mode="full")
    assert r.returncode == 0 and r.proc.stdout == "sums 10 10 10 10\n"
    # --on-error=continue: the application runs on past the bad writes (the
    # default aborts the launch as compute-sanitizer does, and the copy after
    # it copies nothing)
    c = subprocess.run([sys.executable, "-m", "ptxc.cli", "check", "--on-error=continue", "--",
                        app], capture_output=True, text=True, timeout=TIMEOUT,
                       cwd=os.path.dirname(app))
    assert c.returncode == 1 and c.stdout == "sums 10 10 10 10\n"
    assert "is right after the end of a device malloc block (20 bytes at 0x" in c.stderr
    assert "========= ERROR SUMMARY: 4 errors" in c.stderr
