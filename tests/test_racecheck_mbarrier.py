"""racecheck and mbarriers (docs/check.md "racecheck"; racecheck_mbar.py):
accesses ordered only by an mbarrier arrive and a successful wait on the
phase it completed are no hazard; without the wait, or with a write after
the arrive, they are.

The kernels are tests/cuda/race_mbarrier.cu (raw mbarrier PTX through
inline asm), compiled by
``nvcc -ptx -arch=sm_90 -O3 race_mbarrier.cu -o race_mbarrier.sm90.ptx``,
and tests/cuda/mbarrier.cu (``cuda::barrier``); CUDA 13.0. Expected hazards
are derived from the source by hand: the executor runs the warps of a CTA
in index order, each until a barrier, an unfinished wait or its end, so
the producer warp 0 has written and arrived before any consumer reads.
Before racecheck modelled mbarriers, the ordered cases (mode 0, chain with
the wait, neighbour) reported the same RAW errors as the unordered ones.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.launcher.api import launch

CUDA = Path(__file__).parent / "cuda"
PTX = CUDA / "race_mbarrier.sm90.ptx"
LINES = PTX.read_text().splitlines()


def line_of(text: str) -> int:
    return next(i + 1 for i, s in enumerate(LINES) if text in s)


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def run(module, name, block, *args):
    k = next(x for x in module.kernels if name in x.name)
    out = np.zeros(32, np.int32)
    prof = launch(module, k, (1, 1, 1), (block, 1, 1), (out, *map(np.int32, args)),
                  mode="full", check="racecheck")
    return out, {(h.kind, h.severity): h for h in prof.race_hazards}


FIRST_ST = "st.shared.u32 \t[%r2], %r3;"        # buf[t] = 10 t
SECOND_ST = "st.shared.u32 \t[%r2], %r16;"      # buf[t] = 10 t + 1, after the arrive
LD = "ld.shared.u32 \t%r14, [%r2+-128];"        # out[t - 32] = buf[t - 32]


@pytest.mark.parametrize("block,nprod", [(64, 32), (48, 16)])
def test_wait_on_the_completed_phase_orders(module, block, nprod):
    # nprod producer lanes write buf[lane] and arrive; the mbarrier expects
    # nprod arrivals, so the last of them completes phase 0. The consumers
    # (threads 32..block-1; 16 lanes of warp 1 and 16 idle producer lanes
    # when block = 48) wait on parity 0 and read what was released: none.
    out, hz = run(module, "producer_consumer", block, 0, nprod)
    assert hz == {}
    np.testing.assert_array_equal(out[:block - 32], 10 * np.arange(block - 32))


@pytest.mark.parametrize("block,nprod", [(64, 32), (48, 16)])
def test_no_wait_is_a_hazard(module, block, nprod):
    # mode 1: no wait. Each consumer thread t reads the 4 bytes of buf[t-32]
    # that producer thread t - 32 wrote: one RAW per consumer thread
    # (block - 32 of them), between warps: errors. First occurrence: thread
    # 32 reading byte 0, written by thread 0.
    _, hz = run(module, "producer_consumer", block, 1, nprod)
    assert set(hz) == {("RAW", "error")}
    raw = hz["RAW", "error"]
    assert (raw.first_line, raw.second_line, raw.count) == (line_of(FIRST_ST), line_of(LD),
                                                            block - 32)
    assert (raw.first_thread, raw.second_thread) == ((0, 0, 0), (32, 0, 0))
    assert raw.where.endswith("E3buf + 0")


@pytest.mark.parametrize("block,nprod", [(64, 32), (48, 16)])
def test_write_after_the_arrive_is_not_released(module, block, nprod):
    # mode 2: the consumers wait on phase 0, but each producer writes
    # buf[t] again after its arrive; that second store is the byte's last
    # write and the wait does not cover it: block - 32 RAW errors against
    # the second store (the first store is ordered and overwritten).
    out, hz = run(module, "producer_consumer", block, 2, nprod)
    assert set(hz) == {("RAW", "error")}
    raw = hz["RAW", "error"]
    assert (raw.first_line, raw.second_line, raw.count) == (line_of(SECOND_ST), line_of(LD),
                                                            block - 32)
    np.testing.assert_array_equal(out[:block - 32], 10 * np.arange(block - 32) + 1)


def test_ordering_is_passed_on_through_a_second_mbarrier(module):
    # chain, 3 warps: warp 0 writes buf and arrives on bar_a; warp 1 waits
    # on bar_a and arrives on bar_b; warp 2 waits on bar_b and reads
    # buf[31 - lane]. Warp 2 never waited on bar_a, but what warp 1 knew
    # when it arrived passes on: no hazard.
    out, hz = run(module, "chain", 96, 1)
    assert hz == {}
    np.testing.assert_array_equal(out, 32 - np.arange(32))


def test_chain_without_the_first_wait_is_a_hazard(module):
    # with_a = 0: warp 1 arrives on bar_b without waiting on bar_a, so bar_b
    # orders nothing of warp 0: each of warp 2's 32 threads reads 4 bytes
    # one thread of warp 0 wrote: 32 RAW errors; first: thread 64 reads
    # buf[31] (byte 124), written by thread 31.
    _, hz = run(module, "chain", 96, 0)
    assert set(hz) == {("RAW", "error")}
    raw = hz["RAW", "error"]
    assert raw.count == 32
    assert (raw.first_thread, raw.second_thread) == ((31, 0, 0), (64, 0, 0))
    assert raw.where.endswith("E3buf + 124")


def test_cuda_barrier_arrive_and_wait_token():
    # mbarrier.cu neighbour: every thread writes tmp[t], arrives (token
    # form), waits on its token, reads tmp[(t + 1) % 128], written by the
    # next thread (another warp for t = 31, 63, 95, 127; the same warp
    # otherwise). Every write precedes the arrive that completes phase 0
    # and every read follows a wait on it: no hazard, in both CTAs.
    m = ptxc.load(str(CUDA / "mbarrier.sm90.ptx"))
    k = next(x for x in m.kernels if "neighbour" in x.name)
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(256, np.float32)
    prof = launch(m, k, (2, 1, 1), (128, 1, 1), (out, x), mode="full", check="racecheck")
    assert prof.race_hazards == []
    want = 2 * x.reshape(2, 128)[:, (np.arange(128) + 1) % 128].ravel()
    np.testing.assert_array_equal(out, want)
