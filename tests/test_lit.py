"""Run the lit + FileCheck regression tests (lit-tests/) under pytest.

The `lit` and `filecheck` scripts must sit next to the running interpreter
(they come with `pip install -e '.[test]'`); lit.cfg.py puts that bin/ folder
first on lit's PATH so the ptxc script of this environment is the one tested.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LIT_DIR = REPO / "lit-tests"
BIN = Path(sys.executable).parent


def _script(name: str) -> str | None:
    path = BIN / name
    if path.exists():
        return str(path)
    return shutil.which(name)


def test_lit_suite():
    lit = _script("lit")
    if lit is None:
        pytest.skip("the `lit` script is not installed (pip install -e '.[test]')")
    if _script("filecheck") is None:
        pytest.skip("the `filecheck` script is not installed (pip install -e '.[test]')")
    if _script("ptxc") is None:
        pytest.skip("the `ptxc` console script is not installed (pip install -e .)")
    env = dict(os.environ)
    env["PATH"] = str(BIN) + os.pathsep + env.get("PATH", "")
    workers = os.environ.get("PTXC_LIT_WORKERS") or str(min(os.cpu_count() or 1, 4))
    proc = subprocess.run([lit, "-sv", f"-j{workers}", str(LIT_DIR)], cwd=REPO, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=1800)
    assert proc.returncode == 0, "lit failed:\n" + proc.stdout[-30000:]
