"""Host time per launch, this tree against an older commit, in the same run.

Applications that launch small kernels many times (tests/apps/nw: 255
launches of 1-128 CTAs of 16 threads; gaussian: 510 launches) spend more
host time around each launch than running its CTAs. Measured two ways,
each tree in child processes that alternate (bench/trees.py points the
venv's editable install at the old tree):

* API: ``ptxc.launch`` of nw's ``nwUpperLeft`` with 1 CTA and with 128
  CTAs, full mode, one executor thread, after a first (compiling) launch:
  wall microseconds per launch (best mean of --rounds batches of --launches),
  the part of it the Profile calls run time (Profile.timings["run"]: the
  executor threads, from the Launch's setup to their end) and its CTAs
  ("cta": the same launch's run time minus the 1-CTA launch's, scaled).
* ``ptxc run --mode full`` of nw 2048 and gaussian 256 (bench sizes of
  tests/apps; the default ``--clock model`` predicts every launch):
  wall seconds, best of --rounds, with the on-disk kernel cache (the
  default: compile time paid once per machine, as a user sees it on the
  second run).

Printed: per case new and old values and old / new (> 1: this tree faster).
Needs nvcc for the apps (skipped without it). Nothing is asserted.

Usage: python bench/launch_overhead.py [--old COMMIT] [--rounds N] [--launches N]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trees import old_tree, run_worker, use_tree   # bench/trees.py (python bench/X.py puts bench/ on sys.path)

ROOT = Path(__file__).resolve().parent.parent
PTX = ROOT / "tests" / "apps" / "nw" / "nw.sm90.ptx"
APPS = {"nw": ("2048",), "gaussian": ("256",)}
BOOT = ("import sys; sys.path.insert(0, {bench!r}); from trees import use_tree; "
        "use_tree({root!r}); from ptxc.cli.main import main; sys.argv = ['ptxc'] + sys.argv[1:]; "
        "main()")


# ------------------------------------------------------------ the worker
def api_worker(root: str, rounds: int, launches: int) -> None:
    """Launch nwUpperLeft in this process on the tree ``root``; print JSON."""
    use_tree(root)
    import numpy as np
    import ptxc
    assert ptxc.__file__.startswith(root), ptxc.__file__
    m = ptxc.load(str(PTX))
    name = next(k.name for k in m.kernels if "UpperLeft" in k.name)
    width = 2049
    score, sim = np.zeros(width * width, np.int32), np.ones(width * width, np.int32)
    out = {}
    for ctas in (1, 128):
        args = [score, sim, width, ctas - 1, 2]
        ptxc.launch(m, name, ctas, 16, args, mode="full", threads=1)      # compiles
        wall = run = float("inf")
        for _ in range(rounds):
            runs = []
            t0 = time.perf_counter()
            for _ in range(launches):
                runs.append(ptxc.launch(m, name, ctas, 16, args, mode="full",
                                        threads=1).timings["run"])
            wall = min(wall, (time.perf_counter() - t0) / launches)
            run = min(run, sum(runs) / launches)
        out[ctas] = {"wall": wall, "run": run}
    print(json.dumps(out))


# ------------------------------------------------------------ the driver
def api_child(root: Path, rounds: int, launches: int) -> dict:
    return run_worker(__file__, root, ["--rounds", rounds, "--launches", launches],
                      {"PTXC_PROGRESS": "0"})


def app_wall(root: Path, exe: Path, args: tuple, cwd: str) -> float:
    cmd = [sys.executable, "-c", BOOT.format(bench=str(ROOT / "bench"), root=str(root)),
           "run", "--mode", "full", "-o", os.path.join(cwd, "summary.txt"), "--", str(exe), *args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ, PTXC_PROGRESS="0"))
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or "PASS" not in proc.stdout:
        sys.exit(f"ptxc run of {exe.name} on {root} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return wall


def apps(old: Path, rounds: int) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    import app_harness as H
    if H.find_nvcc() is None:
        print("(no nvcc: the ptxc run cases are skipped)")
        return {}
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for app, args in APPS.items():
            exe = H.build(ROOT / "tests" / "apps" / app / f"{app}.cu", Path(tmp))
            best = {"new": float("inf"), "old": float("inf")}
            for tree, root in [("new", ROOT), ("old", old)] * 2:      # warm each tree's cache
                app_wall(root, exe, args, tmp)
            for _ in range(rounds):
                for tree, root in (("new", ROOT), ("old", old)):
                    best[tree] = min(best[tree], app_wall(root, exe, args, tmp))
            out[app] = best
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", default="e61d6d8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--launches", type=int, default=300)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.worker:
        return api_worker(opts.worker, opts.rounds, opts.launches)
    old = old_tree(opts.old)
    api = {"new": [], "old": []}
    for _ in range(2):
        api["new"].append(api_child(ROOT, opts.rounds, opts.launches))
        api["old"].append(api_child(old, opts.rounds, opts.launches))
    best = {t: {c: {k: min(r[c][k] for r in rs) for k in ("wall", "run")} for c in ("1", "128")}
            for t, rs in api.items()}
    print(f"host time per launch; new = this tree, old = {opts.old}; {os.cpu_count()} cores")
    print(f"{'case':<34}{'new':>12}{'old':>12}{'old/new':>9}")
    for ctas in ("1", "128"):
        n, o = best["new"][ctas], best["old"][ctas]
        for what, key in (("wall us per launch", "wall"), ("run us per launch", "run")):
            print(f"{f'nwUpperLeft {ctas} CTA(s): {what}':<34}{1e6 * n[key]:>12.1f}"
                  f"{1e6 * o[key]:>12.1f}{o[key] / n[key]:>9.2f}")
    cta = {t: (best[t]["128"]["run"] - best[t]["1"]["run"]) / 127 for t in best}
    print(f"{'nwUpperLeft: run us per extra CTA':<34}{1e6 * cta['new']:>12.1f}"
          f"{1e6 * cta['old']:>12.1f}{cta['old'] / cta['new']:>9.2f}")
    for app, best_app in apps(old, opts.rounds).items():
        n, o = best_app["new"], best_app["old"]
        print(f"{f'ptxc run {app}: wall s':<34}{n:>12.3f}{o:>12.3f}{o / n:>9.2f}")


if __name__ == "__main__":
    main()
