"""The memory counters' cost on the patterns of bench/mem_patterns.py.

Each pattern (matrix multiply with 16 x 16 shared tiles, sequential
reduction, 32 x 32 tiled transpose, shared-atomic histogram:
bench/kernels/patterns.cu) is launched in full mode in this process without
memory counters, with them as before the closed forms (PTXC_FAST_COUNT=0)
and with them (the default), interleaved, each setting on a fresh module
(compile time not counted), one executor thread, best of --repeat of the
process CPU time (less sensitive to the load of a shared machine than wall
time). Prints the times, the ratios to the run without counters, and
whether both counter settings gave the same memory counters (they must;
outputs are checked with numpy too). Set PTXC_OPT=0 or 2 to fix the
optimisation level (docs/performance.md, "Memory counters at fast-path
speed"). Nothing is asserted.

Usage: [PTXC_OPT=0|2] python bench/memcount_patterns.py [--repeat N] [--patterns a,b]
"""
from __future__ import annotations

import argparse
import os
import time

import mem_patterns as M

SETTINGS = (("off", None), ("before", "0"), ("after", "1"))


def timed(case, counters: bool, repeat: int):
    import ptxc
    name, kernel, grid, block, shared, make, check = case
    module = ptxc.load(M.PTX)
    best, prof = float("inf"), None
    for _ in range(repeat + 1):                       # the first compiles
        args = make()
        t0 = time.process_time()
        prof = ptxc.launch(module, kernel, grid, block, args, mode="full", shared_bytes=shared,
                           memory_counters=counters, threads=1)
        best = min(best, time.process_time() - t0)
        if not check(args):
            print(f"  {name}: WRONG OUTPUT")
    return best, prof


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--patterns", default="")
    o = ap.parse_args()
    os.environ["PTXC_CACHE"] = "0"
    print(f"PTXC_OPT={os.environ.get('PTXC_OPT', 'tiered')}, process CPU s, best of {o.repeat}")
    print(f"{'pattern':<11}{'off':>8}{'before':>8}{'after':>8}{'before/off':>11}{'after/off':>10}  same counters")
    for case in M.cases():
        if o.patterns and case[0] not in o.patterns.split(","):
            continue
        got = {}
        for label, flag in SETTINGS:
            if flag is None:
                os.environ.pop("PTXC_FAST_COUNT", None)
            else:
                os.environ["PTXC_FAST_COUNT"] = flag
            got[label] = timed(case, flag is not None, o.repeat)
        os.environ.pop("PTXC_FAST_COUNT", None)
        off, before, after = (got[k][0] for k in ("off", "before", "after"))
        same = (got["before"][1].memory == got["after"][1].memory
                and got["before"][1].per_memory_instr == got["after"][1].per_memory_instr)
        print(f"{case[0]:<11}{off:>8.3f}{before:>8.3f}{after:>8.3f}{before / off:>10.2f}x"
              f"{after / off:>9.2f}x  {same}")


if __name__ == "__main__":
    main()
