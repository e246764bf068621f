"""memcheck (docs/check.md): a launch with check="memcheck" records each
invalid access, masks the failing lanes out of it (a load gives 0, a store or
atomic is dropped) and goes on; without it the launch stops at the first.

The kernels are tests/cuda/memcheck.cu, compiled by
``nvcc -ptx -arch=sm_90 -O3 -lineinfo memcheck.cu -o memcheck.sm90.lineinfo.ptx``
(CUDA 13.0; tests/cuda/build.sh).
Every expected count below is derived from the source by hand (comments);
the outputs are compared with numpy models in which a bad load reads 0.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.launcher.api import launch
from ptxc.check.memcheck import sanitizer_text
from ptxc.launcher.access_errors import memcheck_json as as_json

PTX = Path(__file__).parent / "cuda" / "memcheck.sm90.lineinfo.ptx"
LINES = PTX.read_text().splitlines()


def line_of(text: str, nth: int = 0) -> int:
    """The 1-based PTX line of the nth line containing ``text``."""
    return [i + 1 for i, s in enumerate(LINES) if text in s][nth]


@pytest.fixture(scope="module")
def module():
    return ptxc.load(str(PTX))


def by_line(errors) -> dict:
    return {(e.line, e.kind, e.error): e for e in errors}


# ------------------------------------------------------------ errors
N = 100          # 4 CTAs of 32 threads: threads 0..99 run, 100..127 return


def run_errors(module, threads=None):
    a = np.arange(N, dtype=np.float32) + 1
    out = np.zeros(N, np.float32)
    prof = launch(module, "errors", grid=(4, 1, 1), block=(32, 1, 1), args=(a, out, N),
                  mode="full", check="memcheck", threads=threads)
    return prof, a, out


def test_errors_counts_first_occurrences_and_addresses(module):
    prof, a, out = run_errors(module)
    errs = by_line(prof.mem_errors)
    # in[i + 1] (ld [%rd2+4]): only i = 99 reads in[100], 0 bytes past the
    # 400-byte buffer; thread 99 = CTA 3, thread 3.
    past = errs[(line_of("ld.global.f32 \t%f4, [%rd2+4]"), "load", "out-of-bounds")]
    assert (past.count, past.block, past.thread, past.size) == (1, (3, 0, 0), (3, 0, 0), 4)
    assert past.address & 0xFFFFFFFF == 400 and "right after the end" in past.where
    # (char *)in + 4i + 2 for i % 8 == 5: i = 5, 13, ..., 93 (101 > 99): 12
    # threads, each 2 bytes off a 4-byte boundary, all inside the buffer
    # (4 * 93 + 2 + 4 = 378 <= 400); the first is thread 5 of CTA 0.
    mis = errs[(line_of("[%rd2+2]"), "load", "misaligned")]
    assert (mis.count, mis.block, mis.thread) == (12, (0, 0, 0), (5, 0, 0))
    assert mis.address & 0xFFFFFFFF == 4 * 5 + 2
    # out[i + 4] for i >= 96: 4 stores, out[100..103]; the first (i = 96)
    # is thread 0 of CTA 3, at byte 400 of out.
    st = errs[(line_of("[%rd3+16]"), "store", "out-of-bounds")]
    assert (st.count, st.block, st.thread) == (4, (3, 0, 0), (0, 0, 0))
    assert st.address & 0xFFFFFFFF == 400 and "errors_param_1" in st.where
    assert len(errs) == 3 and prof.mem_error_count == 1 + 12 + 4


def test_errors_outputs_match_numpy(module):
    prof, a, out = run_errors(module)
    nxt = np.append(a[1:], 0)                       # in[100] is a bad load: 0
    want = a + nxt                                  # the misaligned load adds 0
    np.testing.assert_array_equal(out, want)


def test_errors_same_for_any_worker_count(module):
    one = run_errors(module, threads=1)[0].mem_errors
    many = run_errors(module, threads=4)[0].mem_errors
    assert [e.as_dict() for e in one] == [e.as_dict() for e in many]


# ------------------------------------------------------------- north
def test_negative_index_top_row(module):
    # srad_v2's J[index_n], index_n = index - cols: negative for row 0 only,
    # i.e. threadIdx.y == 0 of the CTAs with blockIdx.y == 0: 2 CTAs x 8
    # threads = 16 reads, each 4 * cols = 64 bytes before J.
    rows, cols = 8, 16
    J = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) * 3 + 1
    out = np.zeros_like(J)
    prof = launch(module, "north", grid=(2, 2, 1), block=(8, 4, 1), args=(J, out, cols),
                  mode="full", check="memcheck")
    (e,) = prof.mem_errors
    assert (e.count, e.block, e.thread, e.kind, e.space) == (16, (0, 0, 0), (0, 0, 0), "load", "global")
    assert e.line == line_of("ld.global.f32 \t%f2, [%rd8]")
    assert e.where.startswith("64 bytes before buffer of parameter north_param_0")
    north = np.vstack([np.zeros((1, cols), np.float32), J[:-1]])
    np.testing.assert_array_equal(out, J - north)


def test_default_launch_stops_at_first_error(module):
    J = np.ones((8, 16), np.float32)
    with pytest.raises(ptxc.PtxcError) as e:
        launch(module, "north", grid=(2, 2, 1), block=(8, 4, 1), args=(J, np.zeros_like(J), 16),
               mode="full")
    msg = str(e.value)
    assert "CTA (0,0,0), thread (0,0,0): out-of-bounds access" in msg
    assert "64 bytes before buffer of parameter north_param_0" in msg


def test_hybrid_memcheck_refused(module):
    J = np.ones((8, 16), np.float32)
    with pytest.raises(ptxc.PtxcError, match="memcheck needs a full run"):
        launch(module, "north", grid=(2, 2, 1), block=(8, 4, 1), args=(J, np.zeros_like(J), 16),
               check="memcheck")
    with pytest.raises(ptxc.PtxcError, match="unknown check 'bogus'"):
        launch(module, "north", grid=(2, 2, 1), block=(8, 4, 1), args=(J, np.zeros_like(J), 16),
               mode="full", check="bogus")


def test_clean_kernel_counts_as_without_memcheck(module):
    # No thread misbehaves (i < n guards every access): no errors, the
    # output is 2 * in, and memcheck changes no counter: the full run with
    # it equals the full run and the hybrid run without it.
    a = np.arange(100, dtype=np.float32)
    runs = {}
    for name, kw in (("check", dict(mode="full", check="memcheck")), ("full", dict(mode="full")),
                     ("hybrid", dict(mode="hybrid"))):
        out = np.zeros(100, np.float32)
        runs[name] = launch(module, "clean", grid=(4, 1, 1), block=(32, 1, 1), args=(a, out, 100), **kw)
        if name != "hybrid":
            np.testing.assert_array_equal(out, 2 * a)
    assert runs["check"].mem_errors == [] and runs["check"].mem_error_count == 0
    key = ("inst_executed", "thread_inst_executed")
    assert [getattr(runs["check"], k) for k in key] == [getattr(runs["full"], k) for k in key] \
        == [getattr(runs["hybrid"], k) for k in key]


# ------------------------------------------------------ shared, atomic
def test_shared_store_and_atomic(module):
    # 2 CTAs; per CTA threads 30, 31 store tile[32], tile[33] (byte 128 and
    # 132 of the 128-byte tile): 4 shared errors; thread 31 adds to hits[32]:
    # 2 atomic errors. The dropped stores leave the tile as loaded, so
    # out == in; hits[1..31] get one add per CTA, hits[0] none.
    a = np.arange(64, dtype=np.float32) + 0.5
    out = np.zeros(64, np.float32)
    hits = np.zeros(32, np.int32)
    prof = launch(module, "shared_atomic", grid=(2, 1, 1), block=(32, 1, 1), args=(a, out, hits),
                  mode="full", check="memcheck")
    errs = by_line(prof.mem_errors)
    sh = errs[(line_of("st.shared.u32"), "store", "out-of-bounds")]
    assert (sh.count, sh.space, sh.block, sh.thread, sh.address) == (4, "shared", (0, 0, 0), (30, 0, 0), 128)
    at = errs[(line_of("atom.global.add.u32"), "atomic", "out-of-bounds")]
    assert (at.count, at.block, at.thread) == (2, (0, 0, 0), (31, 0, 0))
    assert at.address & 0xFFFFFFFF == 128
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(hits, np.r_[0, np.full(31, 2)].astype(np.int32))
    assert prof.mem_error_count == 6


def test_vector_load_past_the_end(module):
    # 40 float4 (640 bytes); thread i < 40 reads in[i + 1]: only i = 39 reads
    # in[40], bytes 640..655, one 16-byte error; its out is 0 + 0.
    a = np.arange(160, dtype=np.float32).reshape(40, 4)
    out = np.full(40, -1, np.float32)
    prof = launch(module, "vec4", grid=(2, 1, 1), block=(32, 1, 1), args=(a, out, 40),
                  mode="full", check="memcheck")
    (e,) = prof.mem_errors
    assert (e.count, e.size, e.block, e.thread, e.line) == (1, 16, (1, 0, 0), (7, 0, 0),
                                                           line_of("ld.global.v4.f32"))
    assert e.address & 0xFFFFFFFF == 640
    nxt = np.vstack([a[1:], np.zeros((1, 4), np.float32)])
    np.testing.assert_array_equal(out, nxt[:, 0] + nxt[:, 3])


def test_cp_async_source_past_the_end():
    # bench/kernels/async_mm.cu (mm_async, n = 64, grid 2x2, block (8, 32)):
    # B given 63 rows instead of 64. Row 63 is copied at k0 = 32 by the
    # threads ty = 31, tx = 0..7 of every CTA (16 bytes each, columns
    # 32 * blockIdx.x + 4 * tx): 8 copies x 4 CTAs = 32 errors, the first by
    # thread (0,31,0) of CTA (0,0,0). The copies read 0, so C = A @ B with a
    # zero row 63.
    module = ptxc.load(str(Path(__file__).parent.parent / "bench" / "kernels" / "async_mm.ptx"))
    n = 64
    rng = np.random.default_rng(0)
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n - 1, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    prof = launch(module, "mm_async", grid=(2, 2, 1), block=(8, 32, 1), args=(A, B, C, n),
                  mode="full", check="memcheck")
    (e,) = prof.mem_errors
    assert (e.kind, e.space, e.size, e.count, e.block, e.thread) == \
        ("load", "global", 16, 32, (0, 0, 0), (0, 31, 0))
    assert e.opcode.startswith("cp.async") and e.where.startswith("right after the end of buffer")
    Bz = np.vstack([B, np.zeros((1, n), np.float32)])
    np.testing.assert_allclose(C, A @ Bz, rtol=1e-5)


# ------------------------------------------------------------ report
def test_report_shape(module):
    prof, _, _ = run_errors(module)
    text = sanitizer_text(prof.mem_errors, prof.mem_error_count).splitlines()
    assert text[-1] == "========= ERROR SUMMARY: 17 errors"
    assert "========= Invalid __global__ write of size 4 bytes" in text
    assert "========= Invalid __global__ read of size 4 bytes" in text
    assert "=========     by thread (0,0,0) in block (3,0,0)" in text
    assert any(s.startswith("=========     Address 0x") and s.endswith("is misaligned") for s in text)
    js = as_json(prof.mem_errors, prof.mem_error_count)
    assert js["error_count"] == 17 and len(js["errors"]) == 3


# -------------------------------------------------------- ptxc opt
def test_opt_check_memcheck_cli():
    from click.testing import CliRunner

    from ptxc.cli.main import cli
    base = ["opt", "--pass=count", "--kernel", "errors", "--grid", "4", "--block", "32",
            "--arg", "0=arange:f32:100", "--arg", "1=zeros:f32:100", "--arg", "2=100", str(PTX)]
    r = CliRunner().invoke(cli, base + ["--check", "memcheck"])
    assert r.exit_code == 1, r.output
    assert "========= ERROR SUMMARY: 17 errors" in r.output        # 1 + 12 + 4, see above
    r = CliRunner().invoke(cli, base + ["--check", "memcheck", "--mode", "hybrid"])
    assert r.exit_code == 2 and "needs --mode full" in r.output
    r = CliRunner().invoke(cli, base + ["--mode", "full"])
    assert r.exit_code == 1 and "CTA (0,0,0), thread (5,0,0): misaligned access" in r.output


def test_errors_name_the_cuda_source_line(module):
    # The PTX has -lineinfo: each error names the memcheck.cu line of its
    # access (read from the .cu, not from a run): in[i + 1] and the
    # misaligned read are on the `float v = ...` / `v += ...` lines, the bad
    # store is `out[i + 4] = v`.
    src = (Path(__file__).parent / "cuda" / "memcheck.cu").read_text().splitlines()
    line = {text: next(i + 1 for i, s in enumerate(src) if text in s)
            for text in ("float v = in[i] + in[i + 1];", "v += *(const float *)", "out[i + 4] = v;")}
    prof, _, _ = run_errors(module)
    got = {(e.kind, e.error): e.source for e in prof.mem_errors}
    assert got[("load", "out-of-bounds")].endswith(f"memcheck.cu:{line['float v = in[i] + in[i + 1];']}")
    assert got[("load", "misaligned")].endswith(f"memcheck.cu:{line['v += *(const float *)']}")
    assert got[("store", "out-of-bounds")].endswith(f"memcheck.cu:{line['out[i + 4] = v;']}")
    text = sanitizer_text(prof.mem_errors, prof.mem_error_count)
    assert f"memcheck.cu:{line['out[i + 4] = v;']} (" in text
