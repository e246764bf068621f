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

* cold: PTXC_CACHE=0, every kernel compiled (the goal: below ptxas -O0),
  with the default ``--jobs`` (every core: the kernels are shared by forked
  processes, ptxc/profile/fork.py) and with ``-j1`` (one process; LLVM still
  runs in a second thread beside code generation, backends/llvm/pipeline.py);
* warm: the on-disk object cache filled by a previous run;
* edited: the same module with one kernel's bound constant changed after the
  warm run (the per-kernel cache recompiles that kernel only).

It also records, for the cold run:

* the parts of the process outside the stages: the interpreter's start and
  the import of each heavy dependency (click, lark, numpy, llvmlite), each
  the child CPU of ``python -c "import X"`` minus that of ``python -c pass``;
* the parts of parsing, in this process (warm, best of N): lexing, the LALR
  parse with the tuple transformer (lexing included), building the IR, SSA;
* a HyPA-style run: HyPA itself is not available here, so "HyPA-style" is
  defined as one CTA of ``.reqntid`` threads per kernel (the kernels that
  have one), every instruction executed: ``ptxc profile --mode=full
  --launch K:1`` for each such kernel, as a cold process like ours. The
  ratio HyPA-style / ours is printed for the whole process and for the
  kernels' run time alone (the rows' ``seconds``).

and, for the speed of the cold run (docs/profile.md, "Speed"):

* the split: what the parent does before the fork (reading and scanning the
  file, loading the parser, LLVM and the analyses: ptxc/profile/split.py's
  ``prepare``) and, for each process, when its share started and ended and
  its stages (parse, slice, infer, codegen, llvm, launches), from one cold
  run with the split's functions wrapped (a timeline from the process start);
* the floor: a process that starts the interpreter, imports what the cold
  run imports before the fork and loads the parser and LLVM, and does
  nothing else (wall median, ratio to ptxas): no run can be faster;
* the cold wall (median of N) on one core (``taskset -c 0``: ``--jobs``
  defaults to 1 there, the one-process path) and on every core, each with
  its ratio to ptxas, so that the reader sees how it scales with cores.

Ratios only; no test asserts them. CPU is the child's user + sys time
(its forked processes and threads included); wall is the time the user
waits. On a machine that other jobs load, wall times mean little: ``--rt``
runs every measured command (ours and ptxas) with ``chrt -f 10`` (Linux
real-time priority: the run gets the cores it asks for), so that the wall
times are those of an idle machine.

    python bench/profile_module.py [--repeat 5] [--no-hypa] [--rt] [--speed] [FILE]
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


PREFIX: list[str] = []          # ["chrt", "-f", "10"] with --rt


def run_cpu(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """(child CPU seconds, wall seconds, stdout)."""
    t, w = child_cpu(), time.perf_counter()
    r = subprocess.run(PREFIX + cmd, capture_output=True, text=True, env=env)
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


def ptxc_cmd(path: Path, extra: tuple = ()) -> list[str]:
    return [sys.executable, "-m", "ptxc.cli", "profile", "--format=json", *extra, str(path)]


def hypa_options(path: Path) -> tuple:
    """``--mode=full --launch K:1`` for every kernel with a .reqntid (HyPA-style)."""
    import ptxc
    module = ptxc.load(str(path))
    return ("--mode=full", *(f"--launch={k.name}:1" for k in module.kernels if k.reqntid))


def import_costs(repeat: int) -> dict:
    """CPU seconds of the interpreter's start and of each heavy import (best of N)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")     # as ptxc.cli.main sets it
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    stmts = {"python": "pass", "click": "import click", "lark": "import lark",
             "numpy": "import numpy", "llvmlite": "import llvmlite.binding",
             "ptxc.cli": "import ptxc.cli.main"}
    best = {k: min(run_cpu([sys.executable, "-c", v], env)[0] for _ in range(repeat))
            for k, v in stmts.items()}
    base = best.pop("python")
    return {"python": base, **{k: max(0.0, v - base) for k, v in best.items()}}


def parse_parts(path: Path, repeat: int) -> dict:
    """Seconds of lexing, LALR + tuples, IR building and SSA (in this process, best of N)."""
    import gc

    import ptxc.frontend.ssa as ssa
    from ptxc.frontend.builder import Builder
    from ptxc.frontend.lexer import PtxLexer
    from ptxc.frontend.parser import _parser
    text = path.read_text()
    parser = _parser()
    lexer = PtxLexer(parser.lexer_conf)
    spent = {"ssa": 0.0}
    build_ssa = ssa.build_ssa

    def timed_ssa(*a):
        t = time.process_time()
        build_ssa(*a)
        spent["ssa"] += time.process_time() - t

    def best_of(f, n=repeat):
        times = []
        for _ in range(n):
            gc.disable()
            t = time.process_time()
            out = f()
            times.append(time.process_time() - t)
            gc.enable()
        return min(times), out

    lex, _ = best_of(lambda: sum(1 for _ in lexer.lex(text)))
    lalr, items = best_of(lambda: parser.parse(text))
    ssa.build_ssa = timed_ssa             # function_builder imports it when it runs
    builds = []
    try:
        for _ in range(repeat):
            spent["ssa"] = 0.0
            t, _ = best_of(lambda: Builder(str(path), text).build(items), 1)   # items are not changed
            builds.append((t, spent["ssa"]))
    finally:
        ssa.build_ssa = build_ssa
    build, ssa_s = min(builds)
    return {"lex": lex, "lalr+tuples": lalr - lex, "build": build - ssa_s, "ssa": ssa_s,
            "tokens": sum(1 for _ in lexer.lex(text))}


def best(runs: list) -> tuple[float, float, dict]:
    cpu, wall, out = min(runs, key=lambda r: r[0])
    return cpu, wall, json.loads(out)


def measure(path: Path, repeat: int, ptxas: str | None, cache: str | None, prepare=None,
            extra: tuple = ()):
    ours, ref = [], []
    for _ in range(repeat):
        if prepare is not None:
            prepare()
        ours.append(run_cpu(ptxc_cmd(path, extra), ptxc_env(cache)))
        if ptxas:
            ref.append(run_cpu([ptxas, "-arch=sm_75", "-O0", str(path), "-o", os.devnull],
                               dict(os.environ))[:2])
    walls = sorted(w for _, w, _ in ours)
    return (*best(ours), min(ref) if ref else None, walls[len(walls) // 2])


def line(name: str, cpu: float, wall: float, report: dict, ref, wall_median: float) -> str:
    """CPU (best) and wall (best, median) against ptxas -O0's best CPU and wall."""
    t = report["timings"]
    stages = "  ".join(f"{k} {t.get(k, 0):.3f}" for k in STAGES)
    ref_cpu, ref_wall = ref if ref else (0, 0)
    ratio = f"{cpu / ref_cpu:5.2f}" if ref else "  n/a"
    wratio = f"{wall_median / ref_wall:5.2f}" if ref else "  n/a"
    return (f"{name:8} CPU {cpu:5.3f} s  ptxas -O0 {ref_cpu:.3f} s  ratio {ratio}   "
            f"wall median {wall_median:5.3f} s  ptxas {ref_wall:.3f} s  ratio {wratio}   "
            f"[{stages}]")


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
    ap.add_argument("--no-hypa", action="store_true", help="skip the HyPA-style run")
    ap.add_argument("--rt", action="store_true",
                    help="run the measured commands with chrt -f 10 (idle-machine wall times)")
    ap.add_argument("--speed", action="store_true",
                    help="only the cold run, its split, the floor and the cores (quick)")
    a = ap.parse_args()
    if a.rt:
        PREFIX[:] = ["chrt", "-f", "10"]
    ptxas = shutil.which("ptxas")
    if ptxas and subprocess.run([ptxas, "-arch=sm_75", "-O0", str(a.file), "-o", os.devnull],
                                capture_output=True).returncode != 0:
        ptxas = None
    run_cpu(ptxc_cmd(a.file), ptxc_env(None))           # write .pyc files, warm the page cache
    if a.speed:
        cold = measure(a.file, a.repeat, ptxas, None)
        print(line("cold", *cold))
        speed(a.file, a.repeat, ptxas, cold)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "objects")
        cold = measure(a.file, a.repeat, ptxas, None)
        serial = measure(a.file, a.repeat, ptxas, None, extra=("-j1",))
        warm = measure(a.file, a.repeat, ptxas, cache)
        edited = edited_copy(a.file, tmp)
        again = measure(edited, a.repeat, ptxas, cache,
                        prepare=lambda: shutil.rmtree(cache, ignore_errors=True) or
                        run_cpu(ptxc_cmd(a.file), ptxc_env(cache)))
    k = cold[2]["total"]
    print(f"{a.file.name}: {k['kernels']} kernels, {k['kernels_run']} run in hybrid mode "
          f"({k.get('per_cta_rows', 0)} of them per-CTA rows), CPU seconds, best of {a.repeat}")
    for name, (cpu, wall, report, ref, median) in (("cold", cold), ("cold -j1", serial),
                                                    ("warm", warm), ("edited", again)):
        print(line(name, cpu, wall, report, ref, median))
    costs = import_costs(a.repeat)
    print("process parts (child CPU, best of N): " +
          "  ".join(f"{k} {v:.3f}" for k, v in costs.items()) +
          "   (ptxc.cli: the CLI module with click; the rest are imported when needed)")
    parts = parse_parts(a.file, a.repeat)
    print(f"parse parts (this process, warm, best of N): {parts['tokens']} LALR tokens  " +
          "  ".join(f"{k} {parts[k]:.3f}" for k in ("lex", "lalr+tuples", "build", "ssa")))
    if not a.no_hypa:
        hypa(a.file, a.repeat, cold)
    speed(a.file, a.repeat, ptxas, cold)
    return 0


def speed(path: Path, repeat: int, ptxas: str | None, cold) -> None:
    """The split timeline, the floor and the cold wall on 1 core and on all (module doc)."""
    split_timeline(path)
    ref_wall = cold[3][1] if cold[3] else None
    floor_wall = median_wall(PREFIX + [sys.executable, "-c", FLOOR], ptxc_env(None), repeat)
    print(f"floor (interpreter, imports, parser and LLVM loaded; nothing run): wall median "
          f"{floor_wall:.3f} s" + (f"  ratio to ptxas {floor_wall / ref_wall:.2f}" if ref_wall else ""))
    for name, prefix in (("1 core (taskset -c 0)", ["taskset", "-c", "0"]),
                         (f"{os.cpu_count()} cores", [])):
        if prefix and not shutil.which("taskset"):
            continue
        ours = median_wall(PREFIX + prefix + ptxc_cmd(path), ptxc_env(None), repeat)
        ref = (median_wall(PREFIX + prefix + [ptxas, "-arch=sm_75", "-O0", str(path), "-o", os.devnull],
                           dict(os.environ), repeat) if ptxas else None)
        print(f"cold wall median, {name}: {ours:.3f} s" +
              (f"  ptxas -O0 {ref:.3f} s  ratio {ours / ref:.2f}" if ref else ""))


# The floor: what every cold `ptxc profile` process does before its first kernel.
FLOOR = ("import ptxc.cli.main, ptxc.profile.module_profile, ptxc.profile.module_render\n"
         "from ptxc.profile.split import prepare\nprepare()\n"
         "import os\nos._exit(0)\n")


def median_wall(cmd: list[str], env: dict, repeat: int) -> float:
    walls = sorted(run_cpu(cmd, env)[1] for _ in range(repeat))
    return walls[len(walls) // 2]


# One cold `ptxc profile` with the split's steps timed (ptxc/profile/split.py).
TIMELINE = """
import json, os, sys, time
T0 = time.perf_counter()
import ptxc.cli.main, ptxc.profile.split as ps
FD = int(os.environ["TIMELINE_FD"])
out, run, prep = [], ps.run_share, ps.prepare
def prepare():
    t = time.perf_counter(); prep(); out.append(("prepare", t - T0, time.perf_counter() - T0))
def share(*a):
    t = time.perf_counter(); got = run(*a)
    line = json.dumps(["share", os.getpid(), len(a[3]), t - T0, time.perf_counter() - T0, got[2]])
    os.write(FD, (line + "\\n").encode())
    return got
ps.prepare, ps.run_share = prepare, share
import atexit
atexit.register(lambda: os.write(FD, (json.dumps(["parent"] + out) + "\\n").encode()))
sys.argv = ["ptxc", "profile", "--format=json", sys.argv[1]]
ptxc.cli.main.main()
"""


def split_timeline(path: Path) -> None:
    """The parent's work before the fork and each process's share (module doc)."""
    read, write = os.pipe()
    t = time.perf_counter()
    r = subprocess.run(PREFIX + [sys.executable, "-c", TIMELINE, str(path)], capture_output=True,
                       env=dict(ptxc_env(None), TIMELINE_FD=str(write)), pass_fds=(write,))
    wall = time.perf_counter() - t
    os.close(write)
    with os.fdopen(read) as fh:
        lines = [json.loads(x) for x in fh.read().splitlines() if x]
    if r.returncode not in (0, 1) or not any(x[0] == "share" for x in lines):
        print("split timeline: the one-process path ran (too few kernels or an option it "
              "does not take)")
        return
    print(f"split timeline (one cold run, wall {wall:.3f} s, seconds from the interpreter's "
          "first ptxc import):")
    for x in lines:
        if x[0] == "parent":
            for _, start, end in x[1:]:
                print(f"  parent before the fork: imports, parser, LLVM {start:.3f} -> {end:.3f}")
    for x in sorted((x for x in lines if x[0] == "share"), key=lambda x: x[3]):
        stages = "  ".join(f"{k} {v:.3f}" for k, v in x[5].items())
        print(f"  process {x[1]}: {x[2]} kernels {x[3]:.3f} -> {x[4]:.3f}  [{stages}]")


def hypa(path: Path, repeat: int, cold) -> None:
    """The HyPA-style run (module docstring) against our cold run."""
    options = hypa_options(path)
    runs = [run_cpu(ptxc_cmd(path, options), ptxc_env(None)) for _ in range(repeat)]
    cpu, wall, report = best(runs)
    rows = [r for r in report["kernels"] if r["status"] == "ran"]
    run_s = sum(r["seconds"] for r in rows)
    ours_cpu, ours_report = cold[0], cold[2]
    hypa_wall = sorted(w for _, w, _ in runs)[len(runs) // 2]
    ours_run = sum(r["seconds"] for r in ours_report["kernels"] if r["status"] == "ran")
    print(f"HyPA-style (one CTA of .reqntid threads per kernel, full mode, cold process): "
          f"{len(rows)} kernels run, CPU {cpu:.3f} s, kernel runs {run_s:.3f} s; "
          f"ratio HyPA-style / ours: process {cpu / ours_cpu:.2f} CPU, "
          f"{hypa_wall / cold[4]:.2f} wall (medians), kernel runs "
          f"{run_s / ours_run if ours_run else float('nan'):.2f} "
          f"(ours: {ours_report['total']['kernels_run']} kernels, whole grids, hybrid)")


if __name__ == "__main__":
    sys.exit(main())
