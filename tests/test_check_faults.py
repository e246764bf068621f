"""`ptxc check` on device asserts, traps and --stop-on-error
(tests/cuda_apps/device_faults.cu, built with nvcc at test time; skipped
without nvcc). docs/check.md, "Host API errors, device asserts and traps".

device_faults launches 2 CTAs x 32 threads:
* assert: testKernel(60) asserts gtid < 60: threads 28..31 of CTA 1 fail,
  4 assertion lines, 4 errors; the launch ends, the application gets
  cudaErrorAssert and goes on;
* trap: thread 5 of CTA 1 traps: 1 error (cudaErrorLaunchFailure);
* oob: thread 31 of CTA 1 (i = 63 = n - 1) stores out[64], right after the
  end of the 256-byte allocation #1: one memcheck error; the launch fails
  with cudaErrorLaunchFailure (the default, compute-sanitizer's), or the
  run goes on (--on-error=continue); with --stop-on-error it stops there (1 error, the app prints nothing after
  its first line).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from runtime_apps import TIMEOUT, AppBuilder

P = "========= "


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("check_faults")).build("device_faults")


def check(app, *args, options=()):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", "check", *options, "-o", "report.txt",
                           "--", app, *args], capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=os.path.dirname(app))


def report(app) -> list[str]:
    with open(os.path.join(os.path.dirname(app), "report.txt")) as f:
        return f.read().splitlines()


def test_assert_is_reported_per_failing_thread(app):
    proc = check(app, "assert")
    assert proc.returncode == 1
    assert "sync: cudaErrorAssert (710)" in proc.stdout
    r = report(app)
    assert r[1] == P + "Device-side assertion failed (cudaErrorAssert, error 710)"
    fails = [x for x in r if "Assertion `gtid < N` failed." in x]
    assert [x.split("thread: [")[1].split(",")[0] for x in fails] == ["28", "29", "30", "31"]
    assert all("block: [1,0,0]" in x for x in fails)
    assert r[-1] == P + "ERROR SUMMARY: 4 errors"


def test_trap(app):
    proc = check(app, "trap")
    assert proc.returncode == 1 and "sync: cudaErrorLaunchFailure (719)" in proc.stdout
    r = report(app)
    assert r[1] == P + "Device-side trap (cudaErrorLaunchFailure, error 719)"
    assert "CTA (1,0,0), thread (5,0,0): trap" in r[2]
    assert r[-1] == P + "ERROR SUMMARY: 1 error"


def test_out_of_bounds_aborts_the_launch(app):
    # the default (--on-error=abort): as under compute-sanitizer, the launch
    # fails and the error is sticky (tests/test_check_sanitizer.py)
    proc = check(app, "oob")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[3:] == ["sync: cudaErrorLaunchFailure (719)",
                                            "malloc after: cudaErrorLaunchFailure (719)",
                                            "second launch: cudaErrorLaunchFailure (719)",
                                            "last error again: cudaErrorLaunchFailure (719)",
                                            "sync again: cudaErrorLaunchFailure (719)"]
    r = report(app)
    assert r[1] == P + "Invalid __global__ write of size 4 bytes"
    assert r[-3].startswith(P + "Kernel launch 1 (")
    assert r[-1] == P + "ERROR SUMMARY: 1 error"


def test_out_of_bounds_goes_on_unless_stop_on_error(app):
    proc = check(app, "oob", options=("--on-error=continue",))
    assert proc.returncode == 1 and "sync: cudaSuccess (0)" in proc.stdout
    r = report(app)
    assert r[1] == P + "Invalid __global__ write of size 4 bytes"
    assert P + "    by thread (31,0,0) in block (1,0,0)" in r
    assert any(x.startswith(P + "    and is right after the end of allocation #1 (cudaMalloc 256 bytes")
               for x in r)
    assert r[-1] == P + "ERROR SUMMARY: 1 error"
    proc = check(app, "oob", options=("--stop-on-error",))
    assert proc.returncode == 1 and proc.stdout == "malloc: cudaSuccess (0)\n"
    r = report(app)
    assert r[1] == P + "ptxc stopped the application:"
    assert "CTA (1,0,0), thread (31,0,0): out-of-bounds access" in r[2]
    assert r[-1] == P + "ERROR SUMMARY: 1 error"
