"""Device-side malloc/free and C++ new/delete (tests/cuda/heap.cu, nvcc -O3).

Expected values by hand from backends/llvm/ops/device_heap.py's rules: allocations are
rounded up to 16 bytes, first fit from the start of the heap; calls happen
one warp at a time in CTA order (one worker), lanes in ascending order, so
with no frees in between thread t of alloc_fill (n ints = 4n bytes) gets
heap base + t * round16(4n).
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.ops.device_heap import DeviceHeap
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
from ptxc.launcher.api import launch_segments

PTX = Path(__file__).parent / "cuda" / "heap.sm90.ptx"
SLOTS, SUMS, HEAP = SEG_FIRST_BUFFER, SEG_FIRST_BUFFER + 1, SEG_FIRST_BUFFER + 2
GRID, BLOCK = 2, 64
THREADS = GRID * BLOCK


def heap(nbytes: int = 1 << 16) -> DeviceHeap:
    return DeviceHeap(HEAP, np.zeros(nbytes, np.uint8))


def alloc_then_sum(module, h, n: int, mode: str):
    """alloc_fill then sum_release on heap ``h``; a hybrid run uses the
    ``effects`` slice, as ptxc run does, so that slots are written."""
    opts = {"criteria": "effects"} if mode == "hybrid" else None
    slots = np.zeros(THREADS * 8, np.uint8)
    sums = np.zeros(THREADS * 4, np.uint8)
    fill = launch_segments(module, "alloc_fill", GRID, BLOCK, struct.pack("<QI", SLOTS << 32, n),
                           {SLOTS: slots}, mode=mode, heap=h, slice_options=opts)
    pointers = slots.view(np.uint64).copy()
    used_after_fill = h.bytes_in_use()
    total = launch_segments(module, "sum_release", GRID, BLOCK,
                            struct.pack("<QQI", SLOTS << 32, SUMS << 32, n),
                            {SLOTS: slots, SUMS: sums}, mode=mode, heap=h,
                            slice_options=opts)
    return fill, total, pointers, used_after_fill, sums.view(np.int32)


def test_malloc_addresses_and_contents_by_hand():
    module = ptxc.load(PTX)
    h = heap()
    n = 5                                   # 20 bytes -> 32-byte blocks
    _, _, pointers, used, sums = alloc_then_sum(module, h, n, "full")
    t = np.arange(THREADS)
    assert (pointers == (HEAP << 32) + 32 * t).all()
    assert used == 32 * THREADS
    assert (sums == 5 * t + 10).all()       # sum of t .. t+4
    assert h.bytes_in_use() == 0 and h.free_starts == [0] and h.free_sizes == [1 << 16]


def test_a_full_heap_returns_null():
    module = ptxc.load(PTX)
    h = heap(1024)                          # room for 32 blocks of 32 bytes
    _, _, pointers, _, sums = alloc_then_sum(module, h, 5, "full")
    t = np.arange(THREADS)
    assert (pointers[:32] == (HEAP << 32) + 32 * t[:32]).all() and (pointers[32:] == 0).all()
    assert (sums[:32] == 5 * t[:32] + 10).all() and (sums[32:] == 0).all()


def test_hybrid_hands_out_the_same_addresses_and_counters():
    module = ptxc.load(PTX)
    full = alloc_then_sum(module, heap(1024), 5, "full")
    hybrid = alloc_then_sum(module, heap(1024), 5, "hybrid")
    assert full[0].counters() == hybrid[0].counters()
    assert full[1].counters() == hybrid[1].counters()
    assert (full[2] == hybrid[2]).all() and full[3] == hybrid[3]
    assert (full[4] == hybrid[4]).all()


def test_new_and_delete():
    module = ptxc.load(PTX)
    out = np.zeros(48, np.int32)
    for mode in ("full", "hybrid"):
        prof = ptxc.launch(module, "new_delete", 1, 48, [out], mode=mode)
        assert prof.ctas_run == 1
    assert (out == 3 * np.arange(48) + 7).all()


def test_free_of_a_pointer_malloc_did_not_return_is_an_error():
    module = ptxc.load(PTX)
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(module, "bad_free", 1, 32, [np.zeros(32, np.int32)], mode="full")
    msg = str(e.value)
    assert "thread (0,0,0): free() of an address malloc did not return" in msg
    assert "buffer of parameter bad_free_param_0 + 0" in msg


def test_the_counters_slice_still_runs_every_heap_call():
    """Even the plain hybrid slice (branch criteria, no outputs) runs each
    malloc and free with its argument, so the heap a later launch sees is
    the full run's (passes/slice/engine.py, _heap_call). In new_delete no
    branch reads a pointer, so only this rule keeps the frees' arguments:
    without it the hybrid run would free NULL and leave 96 blocks in use."""
    module = ptxc.load(PTX)
    for mode in ("full", "hybrid"):
        h = heap()
        launch_segments(module, "new_delete", 1, 48, struct.pack("<Q", SLOTS << 32),
                        {SLOTS: np.zeros(48 * 4, np.uint8)}, mode=mode, heap=h)
        assert h.bytes_in_use() == 0 and h.free_sizes == [1 << 16], mode
