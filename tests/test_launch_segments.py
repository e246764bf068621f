"""launch_segments: a launch on device memory the caller manages, with module
variables kept between launches (what the CUDA runtime replacement needs).

tests/cuda/module_vars.cu: every launch adds 1 to the __device__ counter
``launches_seen`` (thread 0) and writes ``table[i % 4] + launches_seen`` for
i < n. Thread 0 of CTA 0 runs the atomicAdd before any thread of that warp
reads the counter, so within launch k (counted from 1) every thread of warp 0
reads k; the test uses one warp so the expected values need no CTA order.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
from ptxc.backends.llvm.runtime import ModuleMemory
from ptxc.launcher.api import launch_segments

PTX = Path(__file__).parent / "cuda" / "module_vars.sm90.ptx"
TABLE = np.array([10, 20, 30, 40], dtype=np.int32)


def params(seg: int, n: int) -> bytes:
    return struct.pack("<QI", seg << 32, n)


def test_module_memory_persists_between_launches():
    m = ptxc.load(PTX)
    memory = ModuleMemory.for_module(m)
    out = np.zeros(32 * 4, dtype=np.uint8)
    seg = SEG_FIRST_BUFFER + 3            # any segment number the caller chooses
    for k in (1, 2, 3):
        full = launch_segments(m, "bump", 1, 32, params(seg, 20), {seg: out}, mode="full",
                               memory=memory)
        got = out.view(np.int32)
        want = TABLE[np.arange(20) % 4] + k
        assert got[:20].tolist() == want.tolist()
        assert not got[20:].any()
        hybrid = launch_segments(m, "bump", 1, 32, params(seg, 20), {seg: out}, mode="hybrid",
                                 memory=ModuleMemory.for_module(m))
        assert hybrid.counters() == full.counters()
    assert struct.unpack_from("<I", memory.globals, 0)[0] == 3


def test_fresh_module_memory_per_launch_without_memory():
    m = ptxc.load(PTX)
    out = np.zeros(128, dtype=np.uint8)
    seg = SEG_FIRST_BUFFER
    for _ in range(2):
        launch_segments(m, "bump", 1, 32, params(seg, 4), {seg: out}, mode="full")
        assert out.view(np.int32)[:4].tolist() == [11, 21, 31, 41]


def test_host_writes_to_constant_memory_are_seen():
    m = ptxc.load(PTX)
    memory = ModuleMemory.for_module(m)
    memory.consts[:16] = np.array([1, 2, 3, 4], dtype=np.int32).view(np.uint8)
    out = np.zeros(128, dtype=np.uint8)
    launch_segments(m, "bump", 1, 32, params(SEG_FIRST_BUFFER, 4), {SEG_FIRST_BUFFER: out},
                    mode="full", memory=memory)
    assert out.view(np.int32)[:4].tolist() == [2, 3, 4, 5]


def test_out_of_bounds_names_the_segment():
    m = ptxc.load(PTX)
    out = np.zeros(8, dtype=np.uint8)     # 2 ints for n = 4
    seg = SEG_FIRST_BUFFER + 1
    with pytest.raises(ptxc.PtxcError) as e:
        launch_segments(m, "bump", 1, 32, params(seg, 4), {seg: out}, mode="full",
                        segment_names={seg: "allocation #1 (cudaMalloc)"})
    msg = e.value.render()
    # thread 2 stores 4 bytes at offset 8 of the 8-byte buffer in segment 7
    assert "out-of-bounds" in msg and ("right after the end of allocation #1 "
                                       "(cudaMalloc, 8 bytes at 0x700000000)") in msg
    assert "thread (2,0,0)" in msg


def test_an_address_below_a_buffer_is_named_by_its_distance():
    """A pointer 8 bytes below the buffer in segment 7: thread 0 stores at
    0x700000000 - 8, which lies in segment 6 (none) at offset 2^32 - 8; the
    message names the distance to the nearest buffer, not that offset."""
    m = ptxc.load(PTX)
    out = np.zeros(128, dtype=np.uint8)
    seg = SEG_FIRST_BUFFER + 1
    below = struct.pack("<QI", (seg << 32) - 8, 4)
    with pytest.raises(ptxc.PtxcError) as e:
        launch_segments(m, "bump", 1, 32, below, {seg: out}, mode="full",
                        segment_names={seg: "allocation #5 (cudaMalloc 128 bytes)"})
    msg = e.value.render()
    assert "address 0x6fffffff8 (8 bytes before allocation #5 (cudaMalloc 128 bytes at " \
           "0x700000000))" in msg
    assert "thread (0,0,0)" in msg
