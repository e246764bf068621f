"""Predicted vs measured times of Luo & Suda's benchmark kinds: the accuracy of eq. (14).

Needs a CUDA GPU and CuPy (`pip install 'ptxc[gpu]'`); not run by tests
(tests/test_luo_suda_bench.py runs the kernels under ptxc and checks this
script's cases and arithmetic).

    python bench/predict_validate.py [--gpu h100] [--params ptxc-params.json]
           [--warps 1-32] [--kernel NAME]... [--samples 20] [--jobs 8]
           [-o bench/predict_validate.csv]

Luo & Suda 2011, section 4: the benchmarks of Table 3, written in CUDA for
ptxc (tests/cuda/luo_suda_bench.cu): svm (512 x 768), matrix multiply
(256 x 256), a 9-point linear filter (800 x 800), sepia (800 x 800),
Black-Scholes-7 and Black-Scholes (900000 options). Section 4.2: "The number
of warps per SM is varied from 1 to 32 ... with the same data size": each
launch has one block per SM (the device's SM count) of 32 w threads, w =
1..32, over the same data (the kernels' grid-stride loops). Every launch is
timed with CUDA events, as the paper did with cudaEventRecord (3 warm-up
launches, the median of --samples), and predicted by `ptxc predict` on the
same PTX, launch and data (--gpu, --params: a `ptxc calibrate` file).
Per kernel and w the accuracy is eq. (14),

    P_acc = min{T_test, T_model} / max{T_test, T_model},

and per kernel its arithmetic and geometric means over w (Table 4). Eq. (14)
is written here (:func:`accuracy`): the model module had no accuracy
function when this script was written.

The PTX is tests/cuda/luo_suda_bench.sm90.ptx on a GPU of compute
capability 9.0 or later, otherwise `nvcc -ptx -arch=sm_XX -O3` of the .cu
(nvcc on PATH); the CSV names it. Writes one row per launch (benchmark,
kernel, warps_per_sm, grid, block, measured_us, predicted_us, accuracy) and
prints the Table 4 of this GPU.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CU = os.path.join(ROOT, "tests", "cuda", "luo_suda_bench.cu")
PTX90 = os.path.join(ROOT, "tests", "cuda", "luo_suda_bench.sm90.ptx")
OPTIONS = 900000


@dataclass(frozen=True)
class Case:
    benchmark: str      # Table 3's name
    kernel: str
    args: tuple         # one `--arg` value per parameter (docs/launch.md); @NAME: DATA[NAME]
    proportion: float   # Table 3's computation proportion on the GTX 260


CASES = [
    Case("svm", "svm_dot", ("random:f32:393216:1", "random:f32:768:2", "zeros:f32:512",
                            "512", "768"), 0.2623),
    Case("matrix", "matmul", ("random:f32:65536:1", "random:f32:65536:2", "zeros:f32:65536",
                              "256"), 0.282),
    Case("linear", "linear_filter", ("random:f32:640000:1", "zeros:f32:640000", "800", "800"),
         0.4584),
    Case("sepia", "sepia", ("@RGB", "zeros:f32:1920000", "640000"), 0.5297),
    Case("blackscholes-7", "black_scholes7",
         ("@S", "@X", "@T", "@E7", f"zeros:f32:{OPTIONS}", f"zeros:f32:{OPTIONS}", "0.02", "0.3",
          str(OPTIONS)), 0.7662),
    Case("blackscholes", "black_scholes",
         ("@S", "@X", "@T", f"zeros:f32:{OPTIONS}", f"zeros:f32:{OPTIONS}", "0.02", "0.3",
          str(OPTIONS)), 0.8697),
]


def data() -> dict:
    """The arrays the `@NAME` arguments stand for (option prices, strikes,
    years as the CUDA SDK's BlackScholes sample draws them; RGB in 0..255)."""
    rng = np.random.default_rng(28)
    return {"S": rng.uniform(5, 30, OPTIONS).astype(np.float32),
            "X": rng.uniform(1, 100, OPTIONS).astype(np.float32),
            "T": rng.uniform(0.25, 10, OPTIONS).astype(np.float32),
            "E7": (rng.random(7 * OPTIONS) * 0.01).astype(np.float32),
            "RGB": (rng.random(3 * 640000) * 255).astype(np.float32)}


def accuracy(t_test: float, t_model: float) -> float:
    """Eq. (14): P_acc = min{T_test, T_model} / max{T_test, T_model}."""
    return min(t_test, t_model) / max(t_test, t_model)


def means(values) -> tuple:
    """(arithmetic, geometric) mean, as Table 4 reports the accuracies."""
    v = [float(x) for x in values]
    return sum(v) / len(v), math.exp(sum(math.log(x) for x in v) / len(v))


def warp_sweep(sm_count: int, max_warps: int, warps=None) -> list:
    """(grid, block) of each warp count: one block of 32 w threads per SM."""
    return [(sm_count, 32 * w) for w in (warps or range(1, max_warps + 1))]


def parse_warps(text: str) -> list:
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def scalar_type(p):
    t = p.type.lstrip(".") if isinstance(p.type, str) else str(p.type)
    return {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64,
            "s64": np.int64, "b64": np.uint64, "f32": np.float32, "f64": np.float64}[t]


def ptx_for(cp) -> str:
    """The PTX this GPU can load: the committed sm_90 file, or nvcc's for its arch."""
    props = cp.cuda.runtime.getDeviceProperties(0)
    major, minor = int(props["major"]), int(props["minor"])
    if major >= 9:
        return PTX90
    if not shutil.which("nvcc"):
        sys.exit(f"predict_validate: compute capability {major}.{minor}: the sm_90 PTX does "
                 "not load and nvcc is not on PATH")
    out = os.path.join(tempfile.mkdtemp(prefix="ptxc-validate-"),
                       f"luo_suda_bench.sm{major}{minor}.ptx")
    subprocess.run(["nvcc", "-ptx", f"-arch=sm_{major}{minor}", "-O3", CU, "-o", out], check=True)
    return out


def gpu_args(cp, fn, case: Case, arrays: dict) -> list:
    """The launch's arguments on the GPU, generated as ptxc generates them."""
    from ptxc.launcher.args import parse_arg_strings
    items = [f"{i}={v}" for i, v in enumerate(case.args) if not v.startswith("@")]
    values = parse_arg_strings(fn, items)
    out = []
    for i, p in enumerate(fn.params):
        v = arrays[case.args[i][1:]] if case.args[i].startswith("@") else values[i]
        out.append(cp.asarray(v) if isinstance(v, np.ndarray) else scalar_type(p)(v))
    return out


def measure(cp, function, grid, block, args, samples) -> float:
    """Median seconds of ``samples`` launches timed with CUDA events."""
    for _ in range(3):
        function((grid,), (block,), tuple(args))
    times = []
    for _ in range(samples):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        function((grid,), (block,), tuple(args))
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    return float(np.median(times))


def predict(ptx, case: Case, grid, block, gpu, params, npy: dict) -> float:
    """``ptxc predict``'s seconds for one launch."""
    args = [f"{i}={'@' + npy[v[1:]] if v.startswith('@') else v}" for i, v in enumerate(case.args)]
    cmd = [sys.executable, "-m", "ptxc.cli", "predict", ptx, "--kernel", case.kernel,
           "--grid", str(grid), "--block", str(block), "--gpu", gpu, "--format", "json"]
    cmd += [a for item in args for a in ("--arg", item)]
    if params:
        cmd += ["--params", params]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"ptxc predict {case.kernel} {grid}x{block}: {out.stdout}{out.stderr}")
    return json.loads(out.stdout)["predicted_seconds"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="h100", help="ptxc's GPU model of the prediction")
    ap.add_argument("--params", default=None, help="a `ptxc calibrate` file")
    ap.add_argument("--warps", default="1-32", help="warps per SM: 1-32 (section 4.2), 1,2,4")
    ap.add_argument("--kernel", action="append", default=None, help="only these kernels")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="`ptxc predict` processes at once")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "bench", "predict_validate.csv"))
    a = ap.parse_args(argv)
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - no CuPy, no driver, no device
        print(f"predict_validate: needs a CUDA GPU and CuPy ({type(e).__name__}: {e})",
              file=sys.stderr)
        return 1
    import ptxc
    from ptxc.gpus.architecture import gpu
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    sms = int(props["multiProcessorCount"])
    if sms != gpu(a.gpu).sm_count:
        print(f"predict_validate: warning: {name} has {sms} SMs, model {a.gpu} "
              f"{gpu(a.gpu).sm_count}", file=sys.stderr)
    ptx = ptx_for(cp)
    module, raw = ptxc.load(ptx), cp.RawModule(path=ptx)
    arrays = data()
    tmp = tempfile.mkdtemp(prefix="ptxc-validate-")
    npy = {}
    for k, v in arrays.items():
        npy[k] = os.path.join(tmp, f"{k}.npy")
        np.save(npy[k], v)
    cases = [c for c in CASES if not a.kernel or c.kernel in a.kernel or c.benchmark in a.kernel]
    sweep = warp_sweep(sms, 32, parse_warps(a.warps))
    rows, jobs = [], []
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for case in cases:
            fn = next(k for k in module.kernels if k.name == case.kernel)
            args = gpu_args(cp, fn, case, arrays)
            f = raw.get_function(case.kernel)
            for grid, block in sweep:
                t = measure(cp, f, grid, block, args, a.samples)
                jobs.append((case, grid, block, t,
                             pool.submit(predict, ptx, case, grid, block, a.gpu, a.params, npy)))
        for case, grid, block, t, fut in jobs:
            p = fut.result()
            rows.append((case, block // 32, grid, block, t, p, accuracy(t, p)))
    with open(a.output, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["benchmark", "kernel", "warps_per_sm", "grid", "block", "measured_us",
                    "predicted_us", "accuracy", "ptx", "device", "model"])
        for case, warps, grid, block, t, p, acc in rows:
            w.writerow([case.benchmark, case.kernel, warps, grid, block, f"{t * 1e6:.3f}",
                        f"{p * 1e6:.3f}", f"{acc:.4f}", os.path.relpath(ptx, ROOT), name, a.gpu])
    print(f"{name}, model {a.gpu}{' with ' + a.params if a.params else ''}: accuracy "
          "(eq. 14) over warps per SM " + a.warps)
    print(f"  {'benchmark':16s} {'arithmetic':>10s} {'geometric':>10s}")
    for case in cases:
        am, gm = means([r[6] for r in rows if r[0] is case])
        print(f"  {case.benchmark:16s} {100 * am:9.1f}% {100 * gm:9.1f}%")
    print(f"  {len(rows)} launches; {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
