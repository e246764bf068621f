"""`ptxc profile DIR` over N copies of the corpus XLA module: serial
(`--jobs 1`) against `--jobs J` processes, in the same run.

Each command runs in a fresh process (interpreter start and imports
included, as a user waits), the two alternately, best of R wall times each;
the outputs must be the same bytes. The object cache is off
(PTXC_CACHE=0: every module compiles every kernel, as distinct dumps would);
`--warm` uses a cache filled by a first run instead (copies of one module
then share their object code, so this is the best case for compiling).

A second measurement answers whether one large module should be split into
tasks by kernel: the module alone against one task per half of its
launched kernels (`--kernel`), each half in its own process as a split
would run it; a split pays only if the halves' wall time is below the
whole's (with the cores idle otherwise, i.e. fewer modules than cores).

Ratios only; no test asserts them.

    python bench/profile_batch.py [--copies 8] [--jobs 2] [--repeat 3] [--warm]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

XLA = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "xla" / "module_0000.ptx"
PTXC = [sys.executable, "-m", "ptxc.cli"] if shutil.which("ptxc") is None else ["ptxc"]


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(args: list[str], env: dict) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and its workers, stdout)."""
    c, t = child_cpu(), time.perf_counter()
    r = subprocess.run(PTXC + ["profile", *args], capture_output=True, text=True, env=env)
    if r.returncode not in (0, 1):
        raise SystemExit(f"ptxc profile {' '.join(args)} failed:\n{r.stderr[-2000:]}")
    return time.perf_counter() - t, child_cpu() - c, r.stdout


def best(runs: list) -> tuple[float, float]:
    """The least wall time and the least CPU time of several runs."""
    return min(r[0] for r in runs), min(r[1] for r in runs)


def batch(copies: int, jobs: int, repeat: int, env: dict) -> None:
    with tempfile.TemporaryDirectory() as d:
        for i in range(copies):
            shutil.copy(XLA, Path(d) / f"dump_{i:03d}.ptx")
        if env.get("PTXC_CACHE") == "1":
            run(["--jobs", "1", d], env)                   # fill the cache
        serial, par = [], []
        for _ in range(repeat):                             # alternate the two
            serial.append(run(["--jobs", "1", "--format=json", d], env))
            par.append(run(["--jobs", str(jobs), "--format=json", d], env))
        assert all(r[2] == serial[0][2] for r in serial + par), "outputs differ"
        (sw, sc), (pw, pc) = best(serial), best(par)
        print(f"{copies} copies of {XLA.name} (outputs identical):\n"
              f"  --jobs 1:  wall {sw:.2f} s, CPU {sc:.2f} s\n"
              f"  --jobs {jobs}:  wall {pw:.2f} s, CPU {pc:.2f} s\n"
              f"  wall speed-up {sw / pw:.2f}x; CPU --jobs {jobs} / --jobs 1 {pc / sc:.2f}")


def split(repeat: int, env: dict) -> None:
    """The whole module vs two processes running half of its kernels each."""
    runs = [run(["--format=json", str(XLA)], env) for _ in range(repeat)]
    ww, wc = best(runs)
    ran = [k["kernel"] for k in json.loads(runs[0][2])["kernels"] if k["status"] == "ran"]
    halves = [ran[0::2], ran[1::2]]

    def half(names):
        return run([a for n in names for a in ("--kernel", n)] + ["--format=json", str(XLA)], env)

    splits = []
    for _ in range(repeat):
        c, t = child_cpu(), time.perf_counter()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(half, halves))
        splits.append((time.perf_counter() - t, child_cpu() - c))
    sw, sc = best(splits)
    print(f"one module, {len(ran)} kernels run:\n"
          f"  whole:                      wall {ww:.2f} s, CPU {wc:.2f} s\n"
          f"  two halves in two processes: wall {sw:.2f} s, CPU {sc:.2f} s\n"
          f"  wall whole / split {ww / sw:.2f}; CPU split / whole {sc / wc:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warm", action="store_true", help="object cache on (filled first)")
    a = ap.parse_args()
    if not XLA.exists():
        raise SystemExit(f"the corpus XLA module is not at {XLA}")
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        env.update({"PTXC_CACHE": "1", "PTXC_CACHE_DIR": cache} if a.warm else {"PTXC_CACHE": "0"})
        print(f"{os.cpu_count()} cores, cache {'warm' if a.warm else 'off'}")
        batch(a.copies, a.jobs, a.repeat, env)
        split(a.repeat, env)


if __name__ == "__main__":
    main()
