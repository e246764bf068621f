"""`ptxc check --tool racecheck|synccheck|all` on CUDA applications built
with nvcc at test time (skipped without nvcc). docs/check.md.

tests/cuda_apps/race_app.cu launches the seeded bugs of tests/cuda/
racecheck.cu and synccheck.cu once each, on one CTA: ``reverse_nosync``
(64 threads: 32 read-after-write + 32 write-after-read hazards, derived in
tests/test_racecheck.py), ``sync_in_if`` (32 threads: lanes 0-15 reach the
barrier: 16 threads) and ``shfl_divergent`` (32 threads: 16 lanes execute a
full-mask shuffle). Its sum is that of shfl_divergent's output: lanes 0-15
get lane 0's value 5 (80), lanes 16-31 keep in[t] = t + 5 (21 + ... + 36 =
456): 536.

The clean applications of tests/apps that use shared memory and barriers
report no error under every tool (``--tool all``: memcheck, initcheck,
racecheck, synccheck in one run) and still print PASS.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from app_specs import BY_NAME
from runtime_apps import TIMEOUT, AppBuilder

OUTPUT = "sync: no error\nsum 536\n"
CLEAN = ("reduction", "scan", "histo", "stencil", "hotspot", "nw", "transpose")


@pytest.fixture(scope="module")
def builder(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("check_apps"))


def check(app, *options, args=()):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", "check", *options, "--", app, *args],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=os.path.dirname(app))


def test_all_tools_report(builder):
    # One report: racecheck's 64 error hazards + synccheck's 16 threads and
    # 16 lanes; memcheck and initcheck find nothing (every buffer a kernel
    # reads was copied from the host in full).
    app = builder.build("race_app")
    proc = check(app, "--tool", "all")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == OUTPUT
    err = proc.stderr.splitlines()
    assert err[0] == "========= COMPUTE-SANITIZER (ptxc memcheck+initcheck+racecheck+synccheck)"
    assert err[-2:] == ["========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)",
                        "========= ERROR SUMMARY: 96 errors"]
    assert err.count("========= Barrier error detected. Divergent thread(s) in warp") == 1
    assert err.count("========= Barrier error detected. Invalid arguments") == 1
    assert sum(s.startswith("========= Error: Race reported between ") for s in err) == 2
    assert any(s.startswith("========= Error: Race reported between Write access at "
                            "reverse_nosync(float const*, float*) in ") for s in err) or \
        any("_Z14reverse_nosyncPKfPf" in s for s in err)          # without c++filt


def test_json_per_tool(builder):
    app = builder.build("race_app")
    proc = check(app, "--tool", "racecheck", "--format", "json", "-o", "-")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout[len(OUTPUT):])
    assert doc["tool"] == "racecheck" and doc["error_count"] == 64 and doc["hazard_warnings"] == 0
    assert sorted((e["kind"], e["count"], e["launch"]) for e in doc["hazards"]) == [
        ("RAW", 32, 1), ("WAR", 32, 1)]
    assert doc["sync_errors"] == [] and doc["errors"] == []
    proc = check(app, "--tool", "synccheck", "--format", "json", "-o", "-")
    doc = json.loads(proc.stdout[len(OUTPUT):])
    assert doc["error_count"] == 32 and doc["hazards"] == []
    assert [(e["error"], e["count"], e["launch"]) for e in doc["sync_errors"]] == [
        ("divergent-warp", 16, 2), ("invalid-mask", 16, 3)]


@pytest.mark.parametrize("name", CLEAN)
def test_clean_apps_report_nothing(builder, name, tmp_path):
    spec = BY_NAME[name]
    app = builder.build(name, sources=[os.path.join("..", "apps", name, f"{name}.cu")],
                        flags=("-cudart", "shared", "-arch=sm_90", "-O3"))
    proc = check(app, "--tool", "all", "--format", "json", "-o", str(tmp_path / "r.json"),
                 args=spec.args(tmp_path / "out.bin" if spec.output else None))
    assert proc.returncode == 0, proc.stderr
    assert "PASS" in proc.stdout
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["error_count"] == 0 and doc["hazard_warnings"] == 0
    assert doc["hazards"] == doc["sync_errors"] == doc["errors"] == doc["uninitialized"] == []
