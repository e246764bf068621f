"""`ptxc check --tool initcheck|memcheck|all` on a CUDA application with
deliberate initialisation and API errors (tests/cuda_apps/initcheck_app.cu,
built with nvcc at test time; skipped without nvcc). docs/check.md.

Derived by hand from the source (N = 100 floats, 4 CTAs x 32 threads, n = N;
allocations #1 a, #2 b, #3 c, #4 d, #5 e, #6 counter, #7 g are cudaMalloc'd,
#8 m cudaMallocManaged):

* scale(a -> b): the host copied a[0..63]; threads 64..99 read a[64..99]:
  36 errors, the first thread 64 = block 2, thread 0, address a + 256;
* scale(b -> c): b was written by the launch before: none;
* cudaMemset(d, 0, 200 bytes) covers d[0..49]; scale(d -> c): 50 errors,
  the first thread 50 = block 1, thread 18, d + 200;
* count: 32 atomicAdds on an unwritten counter; the lanes run in order, so
  only thread 0's reads an unwritten value: 1 error (an atomic read);
* cudaMemcpy(e, a, D2D) copies a's state; scale(e -> c): 36 errors as for a;
* cudaMemset2D(g, pitch 40, width 20, 10 rows) writes bytes 40r .. 40r+19,
  g[10r .. 10r+4]; scale(g -> c): the other 50 floats, the first thread 5
  (block 0), g + 20;
* scale(m -> c): managed memory is not tracked: none;
* cudaFree(b + 1) (4 bytes into #2), the second cudaFree(c) (a double free)
  and a cudaMemcpy of 792 bytes into the 400-byte a (392 past its end) fail
  with cudaErrorInvalidValue: 3 API errors.

initcheck: 36 + 50 + 1 + 36 + 50 + 3 = 176 errors; memcheck: the 3 API
errors; all: 176. Output: b = 2a with a[i] = i + 1 for i < 64, 0 after (cudaMalloc
memory reads as 0 here): 2 * (64 * 65 / 2) = 4160; c = 2m = 200.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from runtime_apps import TIMEOUT, AppBuilder, run_ptxc

OUTPUT = ("b sum 4160.0\nc sum 200.0\nfree inside: 1\nfree: 0\nfree again: 1\n"
          "copy past the end: 1\n")
P = "========= "


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("initcheck_apps")).build(
        "initcheck_app", flags=("-cudart", "shared", "-arch=sm_90", "-lineinfo"))


def check(app, *options):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", "check", *options, "--", app],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=os.path.dirname(app))


def blocks(stderr: str) -> list[list[str]]:
    """The report's error blocks (lines without the prefix)."""
    out, cur = [], []
    for line in stderr.splitlines():
        if line == P.strip():
            out.append(cur)
            cur = []
        elif line.startswith(P) and "COMPUTE-SANITIZER" not in line and "ERROR SUMMARY" not in line:
            cur.append(line[len(P):])
    return out


def test_initcheck_report(app):
    proc = check(app, "--tool", "initcheck")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == OUTPUT
    err = proc.stderr.splitlines()
    assert err[0] == P + "COMPUTE-SANITIZER (ptxc initcheck)"
    assert err[-1] == P + "ERROR SUMMARY: 176 errors"
    b = blocks(proc.stderr)
    read = "Uninitialized __global__ memory read of size 4 bytes"
    assert [x[0] for x in b[:5]] == [read, read, "Uninitialized __global__ memory atomic read of "
                                     "size 4 bytes", read, read]
    assert [x[-1] for x in b[:5]] == [f"    {n} {'time' if n == 1 else 'times'} in this launch "
                                      f"(first occurrence shown)" for n in (36, 50, 1, 36, 50)]
    assert b[0][2:5] == ["    by thread (0,0,0) in block (2,0,0)", "    Address 0x600000100",
                         "    in allocation #1 (cudaMalloc 400 bytes at 0x600000000) + 256"]
    assert b[1][2] == "    by thread (18,0,0) in block (1,0,0)"
    assert b[1][4] == "    in allocation #4 (cudaMalloc 400 bytes at 0x900000000) + 200"
    assert b[4][2] == "    by thread (5,0,0) in block (0,0,0)" and b[4][4].endswith(" + 20")
    assert "initcheck_app.cu:13 (" in b[0][1]           # the CUDA source line of in[i]
    api = b[5:]
    assert [x[0] for x in api] == ['Program hit cudaErrorInvalidValue (error 1) due to "invalid '
                                   f'argument" on CUDA API call to {c}.'
                                   for c in ("cudaFree", "cudaFree", "cudaMemcpy")]
    assert api[0][1] == "    Pointer 0x700000004: 4 bytes into allocation #2 (cudaMalloc 400 bytes): not its start"
    assert api[0][2] == "    after 7 kernel launches"        # 6 scale + 1 count
    assert "already freed (a double free)" in api[1][1]
    assert api[2][1].endswith("392 bytes past its end (400 bytes)")


def test_memcheck_reports_api_errors(app):
    proc = check(app, "--tool", "memcheck", "--format", "json", "-o", "-")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout[len(OUTPUT):])
    assert doc["error_count"] == 3 and doc["errors"] == [] and doc["uninitialized"] == []
    assert [(e["call"], e["code"]) for e in doc["api_errors"]] == \
        [("cudaFree", 1), ("cudaFree", 1), ("cudaMemcpy", 1)]


def test_all_tools(app):
    proc = check(app, "--tool", "all", "--format", "json", "-o", "-")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout[len(OUTPUT):])
    assert doc["tool"] == "memcheck+initcheck+racecheck+synccheck" and doc["error_count"] == 176
    assert sorted(e["count"] for e in doc["uninitialized"]) == [1, 36, 36, 50, 50]


def test_run_without_check_is_unchanged(app):
    # ptxc run: same output, exit 0, no check report
    run = run_ptxc(app, mode="full")
    assert run.returncode == 0, run.proc.stderr
    assert run.proc.stdout == OUTPUT and "COMPUTE-SANITIZER" not in run.proc.stderr


# ------------------------------------------------ clean applications
# App-suite programs (tests/apps) that initialise everything they read, one
# per way of writing device memory: cudaMemcpy (matrixMul), cudaMemset and
# multi-pass kernels (reduction), device-to-device copies (scan), async
# copies and memsets on streams (simpleStreams), managed memory
# (unifiedMemory), atomics (histo), __device__ variables (symbols).
CLEAN = ("matrixMul", "reduction", "scan", "simpleStreams", "unifiedMemory", "histo", "symbols")


@pytest.fixture(scope="module")
def clean_apps(tmp_path_factory):
    import app_harness as H
    from app_specs import BY_NAME
    H.require_apps()
    out = tmp_path_factory.mktemp("initcheck-clean")
    return out, H.build_all([BY_NAME[n].source for n in CLEAN], out)


@pytest.mark.parametrize("name", CLEAN)
def test_clean_app_has_no_errors(clean_apps, name):
    from app_specs import BY_NAME
    out, built = clean_apps
    spec = BY_NAME[name]
    proc = subprocess.run([sys.executable, "-m", "ptxc.cli", "check", "--tool", "all", "--", str(built[name]),
                           *spec.args(out / f"{name}.out" if spec.output else None)],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=out)
    assert proc.returncode == 0, proc.stderr
    assert "PASS" in proc.stdout
    assert proc.stderr.splitlines()[-1] == "========= ERROR SUMMARY: 0 errors"
