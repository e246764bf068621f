"""docs/runtime-api.md is what ptxc/runtime/api_table.py generates from the
shim's sources, and those sources' idea of "implemented" is what the built
shim really defines (strong symbols; stubs are weak)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ptxc.runtime import api_table

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_table_is_current():
    assert (ROOT / "docs" / "runtime-api.md").read_text() == api_table.render(), \
        "regenerate: python -m ptxc.runtime.api_table > docs/runtime-api.md"


def test_implemented_means_defined_in_the_built_shim():
    from ptxc.runtime.shim import library_path
    if shutil.which("nm") is None:
        pytest.skip("needs nm")
    lib = library_path()
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    strong = {p[2].split("@")[0] for p in (line.split() for line in out.splitlines())
              if len(p) == 3 and p[1] == "T"}
    names = set(api_table.exported())
    assert strong & names == api_table.implemented() & names
