"""`ptxc check --on-error=continue` and `ptxc run --on-error=continue` on a
CUDA application with deliberate memory errors (tests/cuda_apps/memcheck_app.cu, built with nvcc
at test time; skipped without nvcc). docs/check.md.

The application launches ``errors`` (4 x 32 threads, n = 100) and ``north``
(grid 2x2, block 8x4, 8 x 16 floats); the counts, derived by hand in
tests/test_memcheck.py, are 1 read past the end + 12 misaligned reads + 4
stores past the end = 17, and 16 reads before J (the top row) = 33 errors.
Its sums, with bad loads reading 0 and bad stores dropped: errors: sum of
in[i] + in[i+1] over i < 100 with in[i] = i + 1 and in[100] -> 0 is
5050 + 5049 = 10099; north: out = J - J[north], J = 3i + 1, rows 1..7 give
3 * 16 = 48 each (7 * 16 * 48 = 5376), row 0 gives J itself (3 * 120 + 16 =
376): 5752.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from runtime_apps import TIMEOUT, AppBuilder, run_ptxc

OUTPUT = "sync: no error\nerrors sum 10099.0\nnorth sum 5752.0\n"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("memcheck_apps")).build("memcheck_app")


def check(app, *options):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", "check", *options, "--", app],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=os.path.dirname(app))


def test_check_report(app):
    proc = check(app, "--on-error=continue")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == OUTPUT
    err = proc.stderr.splitlines()
    assert err[0] == "========= COMPUTE-SANITIZER (ptxc memcheck)"
    assert err[-1] == "========= ERROR SUMMARY: 33 errors"
    assert err.count("========= Invalid __global__ read of size 4 bytes") == 3
    assert err.count("========= Invalid __global__ write of size 4 bytes") == 1
    assert "=========     by thread (5,0,0) in block (0,0,0)" in err
    assert any(s.startswith("=========     at north(float const*, float*, int) in ") for s in err) \
        or any(s.startswith("=========     at _Z5northPKfPfi in ") for s in err)   # without c++filt
    assert any(s.startswith("=========     and is 64 bytes before allocation #3 (cudaMalloc 512 bytes")
               for s in err)
    assert "=========     16 times in this launch (first occurrence shown)" in err


def test_check_json(app):
    proc = check(app, "--on-error=continue", "--format", "json", "-o", "-")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout[len(OUTPUT):])
    assert doc["error_count"] == 33
    counts = sorted((e["kernel"], e["kind"], e["error"], e["count"]) for e in doc["errors"])
    assert counts == [("_Z5northPKfPfi", "load", "out-of-bounds", 16),
                      ("_Z6errorsPKfPfi", "load", "misaligned", 12),
                      ("_Z6errorsPKfPfi", "load", "out-of-bounds", 1),
                      ("_Z6errorsPKfPfi", "store", "out-of-bounds", 4)]


def test_run_continue_report_has_errors_table(app):
    run = run_ptxc(app, mode="full", options=("--on-error=continue",))
    assert run.returncode == 0, run.proc.stderr
    assert run.proc.stdout == OUTPUT
    rows = run.rows('SELECT launch, kernel, kind, error, count, block_x, thread_x FROM errors '
                    'ORDER BY launch, count')
    assert [(r["launch"], r["kind"], r["error"], r["count"]) for r in rows] == [
        (1, "load", "out-of-bounds", 1), (1, "store", "out-of-bounds", 4),
        (1, "load", "misaligned", 12), (2, "load", "out-of-bounds", 16)]
    assert run.summary["memcheck"]["error_count"] == 33


def test_run_default_stops_at_first_error(app):
    # CTAs run in linear order; in CTA 0 of `errors` every in[i + 1] is in
    # bounds, so the first failure is thread 5's misaligned read.
    run = run_ptxc(app, mode="full")
    assert run.returncode == 1
    assert "kernel errors(float const*, float*, int), CTA (0,0,0), thread (5,0,0): misaligned access" in run.proc.stderr
    assert "sync:" not in run.proc.stdout


def test_run_continue_refuses_hybrid(app):
    run = run_ptxc(app, mode="hybrid", options=("--on-error=continue",))
    assert run.returncode == 2 and "needs --mode full" in run.proc.stderr
