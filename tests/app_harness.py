"""Build the CUDA applications of tests/apps with nvcc and run them under
`ptxc run`; read the SQLite report a run writes (docs/runtime.md has its schema).
Used by tests/test_apps.py, the other tests that build applications at test
time (require_apps / build_for_tests skip them cleanly without nvcc) and
the bench/ scripts (built_apps).
"""
from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

NVCC_FLAGS = ["-cudart", "shared", "-arch=sm_90", "-O3"]
# Columns of the launches table that are not counters (they differ between modes).
NOT_COUNTERS = {"mode", "wall_s", "compile_s", "run_s", "slice_fraction"}


def find_nvcc() -> str | None:
    return shutil.which("nvcc")


def find_ptxc() -> str | None:
    """The `ptxc` next to this Python (the venv's), else the one on PATH."""
    here = Path(sys.executable).parent / "ptxc"
    return str(here) if here.exists() else shutil.which("ptxc")


def runtime_missing() -> str | None:
    """Why `ptxc run` cannot be used here, or None."""
    ptxc = find_ptxc()
    if ptxc is None:
        return "the ptxc command is not installed"
    probe = subprocess.run([ptxc, "run", "--help"], capture_output=True, text=True)
    return None if probe.returncode == 0 else "`ptxc run` is not available: " + probe.stderr[-200:]


def why_no_apps() -> str | None:
    """Why applications cannot be built and run here (no nvcc, no `ptxc
    run`), or None."""
    if find_nvcc() is None:
        return "nvcc not found: the application tests need it"
    return runtime_missing()


def require_apps() -> None:
    """Skip the calling test or fixture (pytest.skip) when why_no_apps()."""
    why = why_no_apps()
    if why:
        import pytest
        pytest.skip(why)


def build_for_tests(sources: list[Path], tmp_path_factory, folder: str) -> dict:
    """require_apps(), then build_all(sources) into a new temporary ``folder``."""
    require_apps()
    return build_all(sources, tmp_path_factory.mktemp(folder))


def build(source: Path, out_dir: Path) -> Path:
    """nvcc -cudart shared -arch=sm_90 -O3 SOURCE -o OUT_DIR/NAME; raises on failure."""
    exe = out_dir / source.stem
    proc = subprocess.run([find_nvcc(), *NVCC_FLAGS, str(source), "-o", str(exe)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed for {source.name}:\n{proc.stderr}")
    return exe


def build_all(sources: list[Path], out_dir: Path, workers: int = 2) -> dict:
    """{stem: executable path, or the exception nvcc raised}."""
    def one(src):
        try:
            return build(src, out_dir)
        except RuntimeError as e:
            return e
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip((s.stem for s in sources), pool.map(one, sources)))



def built_apps(apps, tmp: Path):
    """Build ``apps`` (app_specs entries) into ``tmp``/bin and yield (app,
    executable, a fresh work folder ``tmp``/<name>) for each one that built,
    saying on stderr which did not: the loop of the bench/ scripts."""
    (tmp / "bin").mkdir()
    built = build_all([a.source for a in apps], tmp / "bin")
    for app in apps:
        exe = built[app.name]
        if isinstance(exe, Exception):
            print(f"{app.name}: build failed: {exe}", file=sys.stderr)
            continue
        work = tmp / app.name
        work.mkdir()
        yield app, exe, work

@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    report: Path | None

    def passed(self) -> bool:
        lines = self.stdout.split()
        return self.returncode == 0 and "PASS" in lines and "FAIL" not in lines


def run(exe: Path, args: list[str], mode: str, report: Path | None, cwd: Path,
        timeout: float = 180, extra: list[str] = (), env: dict | None = None) -> Run:
    """`ptxc run --mode MODE [--report FILE] -o SUMMARY -- EXE ARGS` in cwd."""
    cmd = [find_ptxc(), "run", "--mode", mode, *extra]
    if report is not None:
        cmd += ["--report", str(report)]
    cmd += ["-o", str(cwd / f"summary.{mode}.txt"), "--", str(exe), *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env)
    return Run(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start, report)


@dataclass
class Report:
    meta: dict
    launches: list[dict]        # ordered by launch id
    branches: list[dict]        # ordered by launch id, function, block


def read_report(path: Path) -> Report:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        meta = {r["key"]: r["value"] for r in db.execute('SELECT * FROM "meta"')}
        launches = [dict(r) for r in db.execute('SELECT * FROM "launches" ORDER BY "id"')]
        branches = [dict(r) for r in db.execute(
            'SELECT * FROM "branches" ORDER BY "launch_id", "function", "block"')]
    finally:
        db.close()
    return Report(meta, launches, branches)


def counters(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in NOT_COUNTERS}

