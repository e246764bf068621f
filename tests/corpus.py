"""Where the shared PTX corpus is, and its files (tests skip when it is absent)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
PTXAS = shutil.which("ptxas")


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(CORPUS.rglob("*.ptx"))


def corpus_params():
    """pytest params for every corpus file, or one skipped param when absent."""
    files = corpus_files()
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"shared PTX corpus not found at {CORPUS} (it ships beside the repo, not in it)"))]
    return [pytest.param(f, id=str(f.relative_to(CORPUS))) for f in files]


def ptxas_arch(target: list[str]) -> str | None:
    """An -arch for ptxas from a .target list, or None if current ptxas cannot take it."""
    for t in target:
        if t.startswith("sm_"):
            digits = "".join(c for c in t[3:] if c.isdigit())
            if digits and int(digits) >= 75:
                return t
            return None
    return None


def ptxas_accepts(text: str, arch: str) -> tuple[bool, str]:
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        r = subprocess.run([PTXAS, f"-arch={arch}", path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=120)
        return r.returncode == 0, r.stderr
    finally:
        os.unlink(path)
