"""racecheck tracks the shared accesses of ``ldmatrix`` and ``stmatrix``
(docs/check.md "racecheck"): one warp access of 16 bytes per lane that
gives a row address (lanes 0..7 for .x1; PTX ISA 9.7.14.5.15-16).

tests/cuda/race_matrix.cu, compiled by
``nvcc -ptx -arch=sm_90 -O3 race_matrix.cu -o race_matrix.sm90.ptx``
(CUDA 13.0). Expected hazards derived by hand: warp 0 runs before warp 1
(the executor runs warps in index order until a barrier). Before these
instructions were tracked, the kernels without the barrier reported none.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.launcher.api import launch

PTX = Path(__file__).parent / "cuda" / "race_matrix.sm90.ptx"
LINES = PTX.read_text().splitlines()


def line_after(kernel: str, text: str) -> int:
    start = next(i for i, s in enumerate(LINES) if f".entry {kernel}(" in s)
    return next(i + 1 for i, s in enumerate(LINES) if i >= start and text in s)


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def run(module, name, sync):
    k = next(x for x in module.kernels if name in x.name)
    out = np.zeros(32, np.uint32)
    prof = launch(module, k, (1, 1, 1), (64, 1, 1), (out, np.int32(sync)), mode="full",
                  check="racecheck")
    return out, {(h.kind, h.severity): h for h in prof.race_hazards}


# the 8 x 8 .b16 matrix: thread t of warp 0 wrote word t = (t, t) as halves
WORDS = 0x10001 * np.arange(32, dtype=np.uint32)


def test_ldmatrix_reads_are_checked(module):
    # No barrier: lanes 0..7 of warp 1 (threads 32..39) each read a 16-byte
    # row, 4 words written by 4 threads of warp 0's one st.shared: one RAW
    # per later thread and earlier instruction -> 8 errors. First: thread 32
    # reads row 0 (byte 0), written by thread 0. ldmatrix .x1 gives lane l
    # row l / 4, word l % 4: word l, the value thread l stored.
    out, hz = run(module, "ldmatrix_after_store", 0)
    assert set(hz) == {("RAW", "error")}
    raw = hz["RAW", "error"]
    st = line_after("ldmatrix_after_store", "st.shared.u32")
    ld = line_after("ldmatrix_after_store", "ldmatrix.sync")
    assert (raw.first_line, raw.second_line, raw.count) == (st, ld, 8)
    assert (raw.first_thread, raw.second_thread) == ((0, 0, 0), (32, 0, 0))
    assert raw.where.endswith("E4tile + 0")
    np.testing.assert_array_equal(out, WORDS)


def test_stmatrix_writes_are_checked(module):
    # No barrier: warp 0's stmatrix writes row r (16 bytes) at lane r's
    # address from lanes 4r..4r+3 (one write record, thread r, per row);
    # each of warp 1's 32 threads reads word l, in row l / 4: one RAW per
    # thread -> 32 errors, first thread 32 reading byte 0 of row 0.
    out, hz = run(module, "load_after_stmatrix", 0)
    assert set(hz) == {("RAW", "error")}
    raw = hz["RAW", "error"]
    st = line_after("load_after_stmatrix", "stmatrix.sync")
    ld = line_after("load_after_stmatrix", "ld.shared.u32")
    assert (raw.first_line, raw.second_line, raw.count) == (st, ld, 32)
    assert (raw.first_thread, raw.second_thread) == ((0, 0, 0), (32, 0, 0))
    np.testing.assert_array_equal(out, WORDS)


@pytest.mark.parametrize("name", ["ldmatrix_after_store", "load_after_stmatrix"])
def test_barrier_orders_matrix_accesses(module, name):
    out, hz = run(module, name, 1)
    assert hz == {}
    np.testing.assert_array_equal(out, WORDS)
