"""Whole-module profile time vs `ptxas -O0` on the same file, in the same run.

Runs `ptxc profile --format=json FILE` in a fresh process (the time a user
waits: interpreter start, imports, parse, slice, launch inference, code
generation, LLVM, runs) and `ptxas -arch=sm_75 -O0 FILE` (skipped when
absent), alternately, best of N each. The ratio is in CPU seconds of the
child (user + sys, so that other load on the machine disturbs it less than
wall time would). For the best run it prints the wall-time breakdown that
`ptxc profile` reports (parse, slice, infer, codegen, llvm = LLVM start-up,
CTA loop and kernels, launches = compiles left to the launches + runs), the
rest of the process (interpreter start, imports, output, exit) and the
shares of LLVM and parsing. Three cache states:

* cold: PTXC_CACHE=0, every kernel compiled (the goal: below ptxas -O0);
* warm: the on-disk object cache filled by a previous run;
* edited: the same module with one kernel's bound constant changed after the
  warm run (the per-kernel cache recompiles that kernel only).

Ratios only; no test asserts them.

    python bench/profile_module.py [--repeat 5] [FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

XLA = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "xla" / "module_0000.ptx"
STAGES = ("parse", "slice", "infer", "codegen", "llvm", "launches")


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_cpu(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """(child CPU seconds, wall seconds, stdout)."""
    t, w = child_cpu(), time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return child_cpu() - t, time.perf_counter() - w, r.stdout


def ptxc_env(cache: str | None) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # a user's Python keeps its .pyc files
    if cache is None:
        env["PTXC_CACHE"] = "0"
    else:
        env["PTXC_CACHE"], env["PTXC_CACHE_DIR"] = "1", cache
    return env


def ptxc_cmd(path: Path) -> list[str]:
    return [sys.executable, "-m", "ptxc.cli", "profile", "--format=json", str(path)]


def best(runs: list) -> tuple[float, float, dict]:
    cpu, wall, out = min(runs, key=lambda r: r[0])
    return cpu, wall, json.loads(out)


def measure(path: Path, repeat: int, ptxas: str | None, cache: str | None, prepare=None):
    ours, ref = [], []
    for _ in range(repeat):
        if prepare is not None:
            prepare()
        ours.append(run_cpu(ptxc_cmd(path), ptxc_env(cache)))
        if ptxas:
            ref.append(run_cpu([ptxas, "-arch=sm_75", "-O0", str(path), "-o", os.devnull],
                               dict(os.environ))[0])
    return (*best(ours), min(ref) if ref else None)


def line(name: str, cpu: float, wall: float, report: dict, ref: float | None) -> str:
    t = report["timings"]
    stages = "  ".join(f"{k} {t.get(k, 0):.3f}" for k in STAGES)
    rest = wall - sum(t.get(k, 0) for k in STAGES)
    ratio = f"{cpu / ref:5.2f}" if ref else "  n/a"
    return (f"{name:7} CPU {cpu:5.3f} s  ptxas -O0 {ref or 0:.3f} s  ratio {ratio}   "
            f"wall {wall:5.3f} s [{stages}  rest {rest:.3f}]  llvm {100 * t.get('llvm', 0) / wall:4.1f}%, "
            f"parse {100 * t.get('parse', 0) / wall:4.1f}% of the wall time")


def edited_copy(path: Path, folder: str) -> Path:
    """The module with the first inferred kernel's bound constant changed."""
    text = path.read_text()
    out = Path(folder) / ("edited_" + path.name)
    out.write_text(text.replace("158700;", "158600;", 1) if "158700;" in text else text + "\n")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=XLA)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    ptxas = shutil.which("ptxas")
    if ptxas and subprocess.run([ptxas, "-arch=sm_75", "-O0", str(a.file), "-o", os.devnull],
                                capture_output=True).returncode != 0:
        ptxas = None
    run_cpu(ptxc_cmd(a.file), ptxc_env(None))           # write .pyc files, warm the page cache
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "objects")
        cold = measure(a.file, a.repeat, ptxas, None)
        warm = measure(a.file, a.repeat, ptxas, cache)
        edited = edited_copy(a.file, tmp)
        again = measure(edited, a.repeat, ptxas, cache,
                        prepare=lambda: shutil.rmtree(cache, ignore_errors=True) or
                        run_cpu(ptxc_cmd(a.file), ptxc_env(cache)))
    k = cold[2]["total"]
    print(f"{a.file.name}: {k['kernels']} kernels, {k['kernels_run']} run in hybrid mode "
          f"({k.get('per_cta_rows', 0)} of them per-CTA rows), CPU seconds, best of {a.repeat}")
    for name, (cpu, wall, report, ref) in (("cold", cold), ("warm", warm), ("edited", again)):
        print(line(name, cpu, wall, report, ref))
    return 0


if __name__ == "__main__":
    sys.exit(main())
