"""Application rates against the ALU reference, measured in one run.

For every application of tests/apps (or --apps) this runs ``ptxc run --mode
full`` with a report and prints, per application and per kernel:
thread instructions executed (the report's ``thread_inst_executed``), their
rate per second of kernel run time (``run_s``), the JIT compile time
(``compile_s``, cold: PTXC_CACHE=0 so every kernel compiles) and its share of
the application's wall time, and the ratio of the rate to the ALU reference.

The ALU reference is ``collatz`` (bench/kernels/collatz.cu: integer ALU work,
one store per thread) launched in full mode at 2^20 threads through the API,
in this process, with as many executor threads as the apps get (--threads).
It is timed before, between and after the applications (best of each), so a
change of machine load shows as a spread. The SIMD peak of the machine is

    cores x 512 / 32 lanes (AVX-512, 32-bit lanes) x clock (GHz from /proc/cpuinfo)

(os.cpu_count() cores; 8 lanes with AVX2 only), one 32-bit vector operation
per cycle per core: a PTX thread instruction is one lane of one such
operation at best. The reference's share of the peak of the cores it uses
(--threads) and of the whole machine's is printed too, and so is the rate
after tier-up: collatz launched with ptxc's defaults (all cores) until the
tiered JIT has recompiled it at O2, as a kernel that runs for long is
(backends/llvm/jit.py), the rate the issue-25 target "the ALU reference at
30% of the machine's SIMD peak" is read from.

--clocks host,model (or any list of ``host``, ``counters`` = ``--clock host
--memory-counters``, ``model`` = the default ``--clock model``, each
optionally with ``:VAR=VALUE`` environment settings, e.g.
``model:PTXC_FAST_COUNT=0``) runs every application once per clock setting,
interleaved, and prints the run-time ratios to the first: what the memory
counters cost (docs/performance.md, "Memory counters").

--switch NAME=A,B[,C...] runs every application once per value, interleaved,
with the environment variable NAME set to A, then B ... (e.g. ``--switch
PTXC_FAST_MEM=0,1``: the memory fast path off and on) and prints the run-time
ratio A / B (A / C ...) per kernel, and per setting the compile seconds, wall
seconds and compile's share of the wall time summed over the apps:
before/after in the same run (``--switch PTXC_INLINE_SHAPES=1,0``: the
inline vector sequences vs the out-of-line helpers, ops/outlined.py).
Several variables switch together with ``+``: ``--switch
PTXC_INLINE_SHAPES=1,0+PTXC_JIT_WARMUP=0,1+PTXC_TIER_UP_RATIO=8,25`` is the
code before the compile-time work of issue 25 (second part) against after.

The applications run with Python's bytecode cache written (an inherited
PYTHONDONTWRITEBYTECODE=1 is dropped: without the cache every ``ptxc run``
compiles ptxc's own modules again, 0.2-0.3 s that shows as compile time).

Usage: python bench/app_rates.py [--apps a,b] [--size bench|test] [--repeat N]
                                 [--threads N] [--switch NAME=A,B] [--clocks host,model]
needs nvcc and `ptxc run`. Nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import app_harness as H                      # noqa: E402
from app_specs import APPS                   # noqa: E402

COLLATZ = HERE / "kernels" / "collatz.ptx"
CLOCK_ARGS = {"host": ["--clock", "host"], "counters": ["--clock", "host", "--memory-counters"],
              "model": ["--clock", "model"]}


def cpu_ghz() -> float:
    """The highest 'cpu MHz' of /proc/cpuinfo, in GHz (nan if absent)."""
    try:
        mhz = [float(line.split(":")[1]) for line in open("/proc/cpuinfo")
               if line.startswith("cpu MHz")]
    except OSError:
        mhz = []
    return max(mhz) / 1000 if mhz else float("nan")


def simd_peak(cores: int) -> tuple[float, int]:
    """(32-bit lane operations per second, lanes per vector) of the machine."""
    flags = open("/proc/cpuinfo").read()
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    return cores * lanes * cpu_ghz() * 1e9, lanes


def alu_reference(threads: int | None, repeat: int = 3, tiered: bool = False) -> float:
    """Thread instructions per second of collatz at 2^20 threads (best of
    ``repeat``; ``threads`` None: all cores, the default of ptxc). With
    ``tiered``, the launches are repeated until the tiered JIT has
    recompiled the kernel at O2 (jit.note_run: what a kernel that runs
    for long gets), and the rate is that of the O2 code."""
    import ptxc
    from ptxc.backends.llvm import jit
    m = ptxc.load(str(COLLATZ))
    n = 1 << 20
    run = lambda: ptxc.launch(m, "collatz", (n // 256,), (256,),     # noqa: E731
                              [np.zeros(n, np.uint32), n, 1], mode="full", threads=threads)
    run()                                           # compile
    for _ in range(200 if tiered else 0):
        if any(c.level > 0 for c in jit._cache(m).values()):
            break
        run()
    best = 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        prof = run()
        dt = time.perf_counter() - t0
        best = max(best, prof.counters()["thread_inst_executed"] / dt)
    return best


def run_app(app, exe, size, work: Path, env, extra) -> dict:
    """{wall, ok, kernels: {name: [thread_inst, run_s, compile_s, launches]}}."""
    args = [size] if size else []
    report = work / "full.sqlite"
    if report.exists():
        report.unlink()
    r = H.run(exe, args, "full", report, work, timeout=900, extra=extra, env=env)
    kernels = defaultdict(lambda: [0, 0.0, 0.0, 0])
    if report.exists():
        for row in H.read_report(report).launches:
            k = kernels[row.get("kernel") or row.get("function") or "?"]
            k[0] += row.get("thread_inst_executed") or 0
            k[1] += row.get("run_s") or 0.0
            k[2] += row.get("compile_s") or 0.0
            k[3] += 1
    return {"wall": r.wall_s, "ok": r.passed(), "kernels": dict(kernels)}


def best(runs: list[dict]) -> dict:
    """Per kernel, the run with the least run time; wall and compile: minimum."""
    out = {"wall": min(r["wall"] for r in runs), "ok": all(r["ok"] for r in runs), "kernels": {}}
    for name in runs[0]["kernels"]:
        ks = [r["kernels"][name] for r in runs if name in r["kernels"]]
        k = list(min(ks, key=lambda k: k[1]))
        k[2] = min(x[2] for x in ks)
        out["kernels"][name] = k
    return out


def rate(k) -> float:
    return k[0] / k[1] if k[1] > 0 else float("nan")


def print_rates(name: str, res: dict, ref: float) -> None:
    ks = res["kernels"]
    ti, rs, cs = (sum(k[i] for k in ks.values()) for i in range(3))
    share = 100 * cs / res["wall"] if res["wall"] else float("nan")
    flag = "" if res["ok"] else "  (app FAILED)"
    print(f"{name:<14}{'(all)':<22}{ti:>11.3g}{ti / rs if rs else 0:>11.3g}"
          f"{100 * (ti / rs if rs else 0) / ref:>9.2f}%{cs:>9.2f}{share:>7.1f}%{res['wall']:>8.2f}{flag}")
    for kname, k in sorted(ks.items()):
        print(f"{'':<14}{kname[:21]:<22}{k[0]:>11.3g}{rate(k):>11.3g}"
              f"{100 * rate(k) / ref:>9.2f}%{k[2]:>9.2f}")


def print_compile_shares(results: dict, settings: list) -> None:
    """Per setting: compile seconds and wall seconds summed over the apps,
    compile's share of the wall time (overall and the largest per app), and
    the compile ratio to the first setting."""
    print(f"\n{'setting':<28}{'compile s':>10}{'wall s':>9}{'share':>8}{'max app':>9}{'vs first':>9}")
    first = None
    for s in settings:
        cs = [sum(k[2] for k in res[s]["kernels"].values()) for res in results.values()]
        ws = [res[s]["wall"] for res in results.values()]
        worst = max(c / w for c, w in zip(cs, ws) if w)
        first = first or sum(cs)
        print(f"{s[0] + '=' + s[1] if s else 'all apps':<28}{sum(cs):>10.2f}{sum(ws):>9.2f}{100 * sum(cs) / sum(ws):>7.1f}%"
              f"{100 * worst:>8.1f}%{sum(cs) / first:>9.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default="")
    ap.add_argument("--size", choices=("bench", "test"), default="bench")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--switch", default="", help="NAME=A,B: compare two settings of an env variable")
    ap.add_argument("--clocks", default="", help="host,counters,model: compare clock settings")
    o = ap.parse_args()
    if H.find_nvcc() is None or H.runtime_missing():
        sys.exit(f"bench/app_rates.py needs nvcc and `ptxc run` ({H.runtime_missing() or 'no nvcc'})")
    os.environ["PTXC_CACHE"] = "0"
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)    # each ptxc run as installed: bytecode cached
    apps = [a for a in APPS if not o.apps or a.name in o.apps.split(",")]
    settings = [None]
    if o.switch:                    # NAME=A,B[+NAME2=C,D]: the i-th setting sets every NAME to its i-th value
        pairs = [(var, vals.split(",")) for var, vals in (p.split("=", 1) for p in o.switch.split("+"))]
        settings = [("+".join(v for v, _ in pairs), ",".join(vals[i] for _, vals in pairs))
                    for i in range(len(pairs[0][1]))]
    if o.clocks:
        settings = [("clock", c) for c in o.clocks.split(",")]
    extra = ["--threads", str(o.threads)]
    refs = [alu_reference(o.threads)]
    results = {}
    with tempfile.TemporaryDirectory(prefix="ptxc-bench-rates-") as tmp:
        tmp = Path(tmp)
        for app, exe, work in H.built_apps(apps, tmp):
            size = app.bench_size if o.size == "bench" else ""
            runs = defaultdict(list)
            for _ in range(o.repeat):                  # settings interleaved
                for s in settings:
                    env = dict(os.environ)
                    more = []
                    if s and s[0] == "clock":             # host, counters, model[:VAR=VALUE]
                        clock, *sets = s[1].split(":")
                        more = CLOCK_ARGS[clock]
                        env.update(kv.split("=", 1) for kv in sets)
                    elif s:
                        env.update(zip(s[0].split("+"), s[1].split(",")))
                    runs[s].append(run_app(app, exe, size, work, env, extra + more))
            results[app.name] = {s: best(rs) for s, rs in runs.items()}
            print(f"  {app.name} done", file=sys.stderr, flush=True)
            if len(results) == len(apps) // 2:
                refs.append(alu_reference(o.threads))
    refs.append(alu_reference(o.threads))
    ref = max(refs)
    cores = os.cpu_count() or 1
    peak, lanes = simd_peak(cores)
    used = peak * min(o.threads, cores) / cores
    print(f"ptxc run --mode full, {o.size} sizes, best of {o.repeat}, cold JIT, --threads {o.threads}")
    print(f"SIMD peak: {cores} cores x {lanes} lanes (32-bit, AVX-512) x {cpu_ghz():.2f} GHz = "
          f"{peak:.3g} lane-ops/s")
    print(f"ALU reference (collatz, 2^20 threads, {o.threads} executor thread(s)): {ref:.3g} "
          f"thread-instr/s (runs: {', '.join(f'{r:.3g}' for r in refs)}) = "
          f"{100 * ref / used:.1f}% of the peak of {min(o.threads, cores)} core(s), "
          f"{100 * ref / peak:.1f}% of the machine's")
    steady = max(alu_reference(None, tiered=True) for _ in range(2))
    print(f"ALU reference after tier-up (O2, all {cores} cores, ptxc's defaults for a long-running "
          f"kernel): {steady:.3g} thread-instr/s = {100 * steady / peak:.1f}% of the machine's peak")
    for s in settings:
        if s:
            print(f"\n== {s[0]}={s[1]}")
        print(f"{'app':<14}{'kernel':<22}{'thr-inst':>11}{'inst/s':>11}{'of ALU':>10}"
              f"{'compile':>9}{'of wall':>8}{'wall s':>8}")
        for name, res in results.items():
            print_rates(name, res[s], ref)
    a = settings[0]
    print_compile_shares(results, settings)
    for b in settings[1:]:              # each setting against the first
        print(f"\nkernel run time {a[0]}={a[1]} / {a[0]}={b[1]} (> 1: {b[1]} is faster)")
        for name, res in results.items():
            for kname in res[a]["kernels"]:
                ka, kb = res[a]["kernels"][kname], res[b]["kernels"].get(kname)
                if kb and kb[1] > 0:
                    same = "" if ka[0] == kb[0] else "  (thread_inst differ!)"
                    print(f"{name:<14}{kname[:21]:<22}{ka[1] / kb[1]:>8.2f}x{same}")


if __name__ == "__main__":
    main()
