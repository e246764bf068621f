"""Measurement: numba-cuda's own test suite (shipped in its wheel) under
`ptxc run` against numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), same
machine, no GPU.

Each test module runs as its own process of numba's test runner
(``python -m numba.runtests MODULE``; pytest cannot import the suite from
site-packages), both ways, with a time limit per module; a module whose
process times out or dies before the runner's summary counts as one error,
one that skips itself at import (raises SkipTest) as one skipped test. Prints passed / failed /
skipped per way and the modules that fail under ptxc, and writes the
per-module results to a JSON file.

    .venv/bin/python bench/numba_cuda_suite.py [--groups cudapy,cudadrv] [--timeout S]
        [--every N] [-o out.json] [--resume]

``--every N`` runs every N-th module of the cudapy group (alphabetical,
starting with the first): that group is most of the suite, and its heavy
modules take minutes each under ptxc on a small machine.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

RAN = re.compile(r"^Ran (\d+) tests?", re.M)
RESULT = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.M)


def tests_root() -> str:
    import numba_cuda
    return os.path.join(os.path.dirname(numba_cuda.__file__), "numba", "cuda", "tests")


def run(cmd, env, timeout) -> dict:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        out, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out, code = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or ""), "timeout"
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    ran, result = RAN.findall(out), RESULT.findall(out)
    if ran and result:
        detail = dict(kv.split("=") for kv in result[-1][1].split(", ") if "=" in kv)
        counts["failed"] = int(detail.get("failures", 0)) + int(detail.get("unexpected successes", 0))
        counts["errors"] = int(detail.get("errors", 0))
        counts["skipped"] = int(detail.get("skipped", 0)) + int(detail.get("expected failures", 0))
        counts["passed"] = int(ran[-1]) - counts["failed"] - counts["errors"] - counts["skipped"]
    elif "unittest.case.SkipTest" in out:
        counts["skipped"] = 1                 # the whole module skipped itself at import
    else:
        counts["errors"] = 1                  # the module did not finish
    return {"code": code, "seconds": round(time.perf_counter() - t0, 1), **counts,
            "tail": out.strip().splitlines()[-3:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", default="cudapy,cudadrv,nocuda,doc_examples,core,nrt")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--every", type=int, default=1, help="every N-th module of cudapy")
    ap.add_argument("-o", "--output", default="numba_cuda_suite.json")
    ap.add_argument("--resume", action="store_true",
                    help="keep the modules the output file already has, run the others")
    args = ap.parse_args()
    root = tests_root()
    modules = []
    for g in args.groups.split(","):
        if os.path.isdir(os.path.join(root, g)):
            files = [f for f in sorted(os.listdir(os.path.join(root, g)))
                     if re.match(r"test_.*\.py$", f)]
            step = args.every if g == "cudapy" else 1
            modules += [f"numba.cuda.tests.{g}.{f[:-3]}" for f in files[::step]]
    env = dict(os.environ)         # numba's warning tests need its performance warnings
    runner = [sys.executable, "-m", "numba.runtests"]
    results = {}
    if args.resume and os.path.exists(args.output):
        with open(args.output) as f:
            results = json.load(f)
    for name in modules:
        if name in results:
            continue
        ptxc = run([sys.executable, "-m", "ptxc.cli", "run", "--on-error", "cuda", "-o", os.devnull,
                    "--", *runner, name], env, args.timeout)
        sim = run([*runner, name], dict(env, NUMBA_ENABLE_CUDASIM="1"), args.timeout)
        results[name] = {"ptxc": ptxc, "cudasim": sim}
        print(f"{name}: ptxc {ptxc['passed']}/{ptxc['failed']}/{ptxc['skipped']}/{ptxc['errors']} "
              f"({ptxc['seconds']} s), cudasim {sim['passed']}/{sim['failed']}/{sim['skipped']}/"
              f"{sim['errors']} ({sim['seconds']} s)", flush=True)
        with open(args.output, "w") as f:
            json.dump(results, f, indent=1)
    results = {m: r for m, r in results.items() if m in modules}
    for way in ("ptxc", "cudasim"):
        tot = {k: sum(r[way][k] for r in results.values())
               for k in ("passed", "failed", "skipped", "errors")}
        secs = sum(r[way]["seconds"] for r in results.values())
        print(f"{way}: {tot} in {secs:.0f} s")


if __name__ == "__main__":
    main()
