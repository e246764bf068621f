"""initcheck (docs/check.md): a launch with check="initcheck" reports each
global read of bytes of a tracked allocation that nothing wrote, and marks
the bytes its stores and atomics write, in a Shadow kept across launches.

The kernels are tests/cuda/initcheck.cu, compiled by
``nvcc -ptx -arch=sm_90 -O3 -lineinfo initcheck.cu -o initcheck.sm90.lineinfo.ptx``
(CUDA 13.0; tests/cuda/build.sh). The expected errors come from numpy models
of the written bytes (a thread's read is an error when any of its bytes is
unwritten), or are derived by hand where noted.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.instruments.initcheck import Shadow
from ptxc.check.initcheck import sanitizer_text
from ptxc.launcher.api import launch
from ptxc.launcher.api import launch_segments

PTX = Path(__file__).parent / "cuda" / "initcheck.sm90.lineinfo.ptx"
LINES = PTX.read_text().splitlines()
IN, OUT = 6, 7                     # segments of the two buffers
NAMES = {IN: "allocation #1 (cudaMalloc in)", OUT: "allocation #2 (cudaMalloc out)"}


def line_of(text: str) -> int:
    return next(i + 1 for i, s in enumerate(LINES) if text in s)


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def run(module, kernel, grid, params, segments, shadow, block=32, check="initcheck", mode="full"):
    return launch_segments(module, kernel, (grid, 1, 1), (block, 1, 1), params, segments,
                           mode=mode, check=check, shadow=shadow, segment_names=NAMES)


def fresh(*sizes) -> tuple[dict, Shadow]:
    """Segments IN, OUT, ... of these byte sizes, all tracked and unwritten."""
    shadow, segs = Shadow(), {}
    for k, n in enumerate(sizes):
        segs[IN + k] = np.zeros(n, np.uint8)
        shadow.track(IN + k, n)
    return segs, shadow


def ptrs(*segs, n=None) -> bytes:
    return b"".join(struct.pack("<Q", s << 32) for s in segs) + (struct.pack("<i", n) if n else b"")


def expect_first(written: np.ndarray, n: int, size: int):
    """numpy model: (errors, first failing thread index) of n threads each
    reading ``size`` bytes at size * i, given the written-byte mask."""
    bad = ~written[:n * size].reshape(n, size).all(axis=1)
    return int(bad.sum()), int(np.flatnonzero(bad)[0]) if bad.any() else None


def test_scale_reports_unwritten_reads(module):
    # 100 threads (4 CTAs of 32, threads 100..127 return) each read 4 bytes
    # of `in`; a random 90% of its bytes were written.
    segs, shadow = fresh(400, 400)
    written = np.random.default_rng(1).random(400) < 0.9
    shadow.by_seg[IN][:] = written
    prof = run(module, "scale", 4, ptrs(IN, OUT, n=100), segs, shadow)
    count, first = expect_first(written, 100, 4)
    assert prof.init_error_count == count > 0
    [e] = prof.init_errors
    assert (e.count, e.size, e.kind, e.line) == (count, 4, "load", line_of("ld.global.f32"))
    assert (e.block, e.thread) == ((first // 32, 0, 0), (first % 32, 0, 0))
    assert e.address == (IN << 32) + 4 * first
    assert e.where == f"allocation #1 (cudaMalloc in, 400 bytes at 0x{IN << 32:x}) + {4 * first}"
    assert e.source.endswith("initcheck.cu:11")
    # every thread stored out[i]: its 400 bytes are now written
    assert shadow.by_seg[OUT].all()
    text = sanitizer_text(prof.init_errors, prof.init_error_count)
    assert "========= Uninitialized __global__ memory read of size 4 bytes" in text
    assert text.endswith(f"========= ERROR SUMMARY: {count} errors\n")


def test_a_kernel_reads_what_another_wrote(module):
    # in fully written by the host, out written by the first launch: the
    # second launch (out -> in) reads only written bytes.
    segs, shadow = fresh(400, 400)
    shadow.mark(IN, 0, 400)
    run(module, "scale", 4, ptrs(IN, OUT, n=100), segs, shadow)
    prof = run(module, "scale", 4, ptrs(OUT, IN, n=100), segs, shadow)
    assert prof.init_errors == [] and prof.init_error_count == 0


def test_vector_read_counts_once_per_thread(module):
    # 64 threads read 16 bytes each (ld.global.v4.f32): one error per thread
    # whose 16 bytes are not all written, whatever the number of holes.
    segs, shadow = fresh(1024, 256)
    written = np.random.default_rng(2).random(1024) < 0.97
    shadow.by_seg[IN][:] = written
    prof = run(module, "vec4", 2, ptrs(IN, OUT, n=64), segs, shadow)
    count, first = expect_first(written, 64, 16)
    [e] = prof.init_errors
    assert (e.count, e.size, e.line) == (count, 16, line_of("ld.global.v4.f32"))
    assert e.thread == (first % 32, 0, 0) and e.block == (first // 32, 0, 0)


def test_atomic_reads_then_writes(module):
    # 2 CTAs x 32 threads add to one unwritten counter. CTAs run in order and
    # the lanes of a warp in lane order: only the very first atomic (CTA 0,
    # thread 0) reads an unwritten counter; it writes it for all the others.
    segs, shadow = fresh(4)
    prof = run(module, "count", 2, ptrs(IN), segs, shadow)
    [e] = prof.init_errors
    assert (e.count, e.kind, e.block, e.thread) == (1, "atomic", (0, 0, 0), (0, 0, 0))
    assert int(segs[IN].view(np.uint32)[0]) == 64
    # after a memset (the host marks it written): no error
    segs, shadow = fresh(4)
    shadow.mark(IN, 0, 4)
    assert run(module, "count", 2, ptrs(IN), segs, shadow).init_error_count == 0


def test_cp_async_source_is_checked(module):
    # 64 threads copy 16 bytes each with cp.async; the first 40 float4 of
    # `in` were written: threads 40..63 read unwritten bytes (24 errors, the
    # first thread 40 = CTA 0 thread 40 with one 64-thread CTA).
    segs, shadow = fresh(1024, 1024)
    shadow.mark(IN, 0, 40 * 16)
    prof = run(module, "cpasync", 1, ptrs(IN, OUT), segs, shadow, block=64)
    [e] = prof.init_errors
    assert (e.count, e.size, e.thread, e.opcode) == (24, 16, (40, 0, 0), "cp.async.cg.shared.global")
    assert shadow.by_seg[OUT].all()


def test_untracked_memory_is_initialised(module):
    # A segment the shadow does not track (managed or host memory, module
    # variables) counts as written.
    segs, shadow = fresh(400, 400)
    shadow.forget(IN)
    assert run(module, "scale", 4, ptrs(IN, OUT, n=100), segs, shadow).init_error_count == 0


def test_counters_equal_unchecked_runs(module):
    # initcheck changes no counter: the checked full run equals the full run
    # and the hybrid run without it.
    a = np.arange(100, dtype=np.float32).view(np.uint8)
    runs = {}
    for name, kw in (("check", {}), ("full", dict(check=None)), ("hybrid", dict(check=None, mode="hybrid"))):
        segs, shadow = fresh(400, 400)
        segs[IN][:] = a
        shadow.mark(IN, 0, 400)
        runs[name] = run(module, "scale", 4, ptrs(IN, OUT, n=100), segs, shadow, **kw)
        if name != "hybrid":
            np.testing.assert_array_equal(segs[OUT].view(np.float32), 2 * a.view(np.float32))
    key = ("inst_executed", "thread_inst_executed", "branch", "divergent_branch")
    assert [getattr(runs["check"], k) for k in key] == [getattr(runs["full"], k) for k in key] \
        == [getattr(runs["hybrid"], k) for k in key]


def test_memcheck_and_initcheck_together(module):
    # check="memcheck+initcheck" (ptxc check --tool all): one variant with
    # both; 100 threads read a buffer of 96 floats whose first 50 are
    # written: threads 96..99 read past its end (4 memcheck errors, masked
    # out, so not uninitialised reads), threads 50..95 read unwritten bytes (46).
    segs, shadow = fresh(384, 400)
    shadow.mark(IN, 0, 200)
    prof = run(module, "scale", 4, ptrs(IN, OUT, n=100), segs, shadow, check="memcheck+initcheck")
    assert prof.mem_error_count == 4 and prof.init_error_count == 46


def test_launch_api(module):
    # launch()'s arrays come from the host: initialised, so no errors; and
    # initcheck needs a full run.
    a = np.ones(100, np.float32)
    prof = launch(module, "scale", grid=(4, 1, 1), block=(32, 1, 1), args=(a, np.zeros_like(a), 100),
                  mode="full", check="initcheck")
    assert prof.init_errors == [] and prof.to_dict()["initcheck"]["error_count"] == 0
    with pytest.raises(ptxc.PtxcError, match="initcheck needs a full run"):
        launch(module, "scale", grid=(4, 1, 1), block=(32, 1, 1), args=(a, np.zeros_like(a), 100),
               check="initcheck")


def test_shadow_copy_and_pitch():
    s = Shadow()
    s.track(6, 16)
    s.track(7, 16)
    s.mark(6, 1, 2, pitch=8, rows=2)            # bytes 1, 2, 9, 10
    assert list(np.flatnonzero(s.by_seg[6])) == [1, 2, 9, 10]
    s.copy(7, 0, 6, 0, 4, dpitch=4, spitch=8, rows=2)   # rows 0..3 and 8..11 -> 0..3, 4..7
    assert list(np.flatnonzero(s.by_seg[7])) == [1, 2, 5, 6]
    s.copy(7, 8, 99, 0, 8)                      # from untracked memory: written
    assert s.by_seg[7][8:].all() and s.written(7, 8, 8) and not s.written(7, 0, 4)


def test_wmma_loads_and_stores(module):
    # wmma_tf32_raw (tests/cuda/wmma.cu, one warp): D = A (16x8) * B (8x16),
    # f32. wmma.store.d marks the 1 KiB of d written; a's fragment of
    # .m16n16k8 tf32 holds 4 of its 128 elements per lane, each element in
    # exactly one lane (PTX ISA, "Matrix fragments for WMMA"): one unwritten
    # element of a is one error.
    wmma = ptxc.load(str(Path(__file__).parent / "cuda" / "wmma.sm90.ptx"))
    for holes in (0, 1):
        segs, shadow = fresh(512, 512, 1024)
        shadow.mark(IN, 0, 512 - 4 * holes)
        shadow.mark(OUT, 0, 512)
        prof = launch_segments(wmma, "wmma_tf32_raw", (1, 1, 1), (32, 1, 1), ptrs(IN, OUT, OUT + 1),
                               segs, mode="full", check="initcheck", shadow=shadow)
        assert prof.init_error_count == holes
        assert shadow.by_seg[OUT + 1].all()
