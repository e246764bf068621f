"""Benchmark: one numba-cuda kernel under `ptxc run` against numba's CUDA
simulator (NUMBA_ENABLE_CUDASIM=1), same program, same machine.

The program (bench/kernels/numba_saxpy_bench.py) launches a saxpy over N
floats twice and prints the wall time of the second launch (with its
synchronisation): under ptxc the first launch pays for the JIT compile of
the kernel, the simulator has none. Prints both times and the ratio
simulator / ptxc (above 1: ptxc is faster).

    .venv/bin/python bench/numba_vs_cudasim.py [--n N]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "kernels", "numba_saxpy_bench.py")


def timed(cmd, env) -> float:
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    line = next(t for t in out.splitlines() if t.startswith("second launch"))
    return float(line.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 14)
    n = str(ap.parse_args().n)
    env = dict(os.environ, NUMBA_DISABLE_PERFORMANCE_WARNINGS="1")
    ptxc_s = timed([sys.executable, "-m", "ptxc.cli", "run", "-o", os.devnull, "--",
                    sys.executable, PROGRAM, n], env)
    sim_s = timed([sys.executable, PROGRAM, n], dict(env, NUMBA_ENABLE_CUDASIM="1"))
    print(f"saxpy over {n} floats, second launch: ptxc {ptxc_s * 1e3:.1f} ms, "
          f"simulator {sim_s * 1e3:.1f} ms, simulator / ptxc = {sim_s / ptxc_s:.1f}")


if __name__ == "__main__":
    main()
