"""Helpers for tests that build CUDA applications with nvcc and run them
under ``ptxc run`` (tests/test_runtime_apps.py).

``AppBuilder`` compiles each application once per session into a temporary
folder; without nvcc every test that asks for an application is skipped.
``run_ptxc`` runs ``python -m ptxc.cli run ...`` with a timeout (a hang is a
failure, never a stuck test run) and returns the process, the JSON summary
and the SQLite report path.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass

import pytest

APPS = os.path.join(os.path.dirname(__file__), "cuda_apps")
TIMEOUT = 180


def nvcc() -> str | None:
    return shutil.which("nvcc")


class AppBuilder:
    def __init__(self, root):
        self.root = str(root)
        self.built: dict = {}

    def build(self, name: str, sources=None, flags=("-cudart", "shared", "-arch=sm_90")) -> str:
        """Path of application ``name`` built from ``sources`` (default NAME.cu)."""
        key = (name, tuple(sources or ()), tuple(flags))
        if key in self.built:
            return self.built[key]
        if nvcc() is None:
            pytest.skip("needs nvcc")
        srcs = [os.path.join(APPS, s) for s in (sources or [name + ".cu"])]
        out = os.path.join(self.root, name)
        proc = subprocess.run([nvcc(), *flags, *srcs, "-o", out], capture_output=True, text=True,
                              timeout=TIMEOUT)
        assert proc.returncode == 0, proc.stderr
        self.built[key] = out
        return out


@dataclass
class Run:
    proc: subprocess.CompletedProcess
    summary: dict | None
    report: str

    @property
    def returncode(self) -> int:
        return self.proc.returncode

    def rows(self, sql: str) -> list:
        db = sqlite3.connect(self.report)
        db.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in db.execute(sql)]
        finally:
            db.close()


def run_ptxc(app: str, *args, mode: str = "hybrid", options=(), workdir=None, stdout=None) -> Run:
    workdir = workdir or os.path.dirname(app)
    tag = f"{os.path.basename(app)}-{mode}-{abs(hash((args, tuple(options)))) % 10**8}"
    summary = os.path.join(workdir, tag + ".json")
    report = os.path.join(workdir, tag + ".sqlite")
    cmd = [sys.executable, "-m", "ptxc.cli", "run", "--mode", mode, "--format", "json",
           "-o", summary, "--report", report, *options, "--", app, *args]
    proc = subprocess.run(cmd, stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=TIMEOUT, cwd=workdir)
    data = None
    if os.path.exists(summary):
        with open(summary) as f:
            data = json.load(f)
        os.remove(summary)
    return Run(proc, data, report)
