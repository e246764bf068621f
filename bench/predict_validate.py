"""Predicted vs measured kernel times: the accuracy of `ptxc predict` (docs/predict.md).

Needs a CUDA GPU and CuPy (`pip install 'ptxc[gpu]'`); not run by tests.

    python bench/predict_validate.py --gpu h100 [--params ptxc-params.json]
           [--case FILE.ptx:KERNEL:GRID:BLOCK:ARG,ARG...]... [--apps] [-o out.csv]

Events mode (default): every case is a PTX kernel with a launch in ptxc's
`--arg` syntax (docs/launch.md). The arguments are generated as ptxc
generates them, copied to the GPU, the PTX is loaded with cupy.RawModule and
the launch is timed with CUDA events (3 warm-up launches, median of 20).
The same launch is predicted with ptxc (hybrid run with memory counters).
Built-in cases: the app suite's vectorAdd PTX and the repository's example
and TopDown kernels at sizes that fill the GPU.

`--apps` (when `ncu` is on PATH): builds every tests/apps application with
nvcc, runs it natively under `ncu --metrics gpu__time_duration.sum` and
under `ptxc run --topdown --format json`, and pairs the launches in order.

Writes one CSV row per launch (case, kernel, measured_us, predicted_us,
error_pct) and prints the mean absolute percentage error
MAPE = mean(|predicted - measured| / measured) x 100.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = 1 << 22
CASES = [
    f"tests/apps/vectorAdd/vectorAdd.sm90.ptx:_Z9vectorAddPKfS0_Pfi:{N // 256}:256:"
    f"0=random:f32:{N}:1,1=random:f32:{N}:2,2=zeros:f32:{N},3={N}",
    f"examples/branchy.ptx:vecadd_branchy:{N // 256}:256:0=arange:f32:{N},"
    f"1=random:f32:{N}:2,2=zeros:f32:{N},3={N // 2}",
    f"tests/cuda/topdown.sm90.ptx:strided:{N // 32 // 256}:256:0=zeros:f32:{N},"
    f"1=zeros:f32:{N // 32},2=32",
    f"tests/cuda/topdown.sm90.ptx:dfma:{N // 256}:256:0=ones:f64:{N},1=64",
]


def mape(rows) -> float:
    return 100 * float(np.mean([abs(p - m) / m for _, _, m, p in rows]))


def scalar_type(p):
    t = p.type.lstrip(".") if isinstance(p.type, str) else str(p.type)
    return {"u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16,
            "u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64,
            "s64": np.int64, "b64": np.uint64, "f32": np.float32, "f64": np.float64}[t]


def time_case(cp, spec: str) -> tuple:
    """(kernel, measured seconds, launch options) of one --case."""
    import ptxc
    from ptxc.launcher.config import find_kernel
    from ptxc.launcher.args import parse_arg_strings
    path, kernel, grid, block, args = spec.split(":", 4)
    items = args.split(",") if args else []
    module = ptxc.load(os.path.join(ROOT, path))
    fn = find_kernel(module, kernel)
    values = parse_arg_strings(fn, items)
    gpu_args = []
    for i, p in enumerate(fn.params):
        v = values.get(i, 0)
        gpu_args.append(cp.asarray(v) if isinstance(v, np.ndarray) else scalar_type(p)(v))
    k = cp.RawModule(path=os.path.join(ROOT, path)).get_function(kernel)
    g, b = (int(grid),), (int(block),)
    for _ in range(3):
        k(g, b, tuple(gpu_args))
    times = []
    for _ in range(20):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        k(g, b, tuple(gpu_args))
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    return kernel, float(np.median(times)), (path, kernel, grid, block, items)


def predict_case(opts, gpu: str, params: str | None) -> float:
    path, kernel, grid, block, items = opts
    cmd = [sys.executable, "-m", "ptxc.cli", "predict", os.path.join(ROOT, path),
           "--kernel", kernel, "--grid", grid, "--block", block, "--gpu", gpu,
           "--format", "json"] + [a for it in items for a in ("--arg", it)]
    if params:
        cmd += ["--params", params]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["predicted_seconds"]


def events_mode(cp, cases, gpu, params) -> list:
    rows = []
    for spec in cases:
        kernel, measured, opts = time_case(cp, spec)
        rows.append((spec.split(":")[0], kernel, measured, predict_case(opts, gpu, params)))
    return rows


def apps_mode(gpu: str) -> list:
    """Every tests/apps app under ncu and under ptxc run --topdown."""
    rows = []
    apps = os.path.join(ROOT, "tests", "apps")
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(apps)):
            src = os.path.join(apps, name, name + ".cu")
            if not os.path.exists(src):
                continue
            exe = os.path.join(tmp, name)
            subprocess.run(["nvcc", "-cudart", "shared", "-arch=native", "-O3", src, "-o", exe],
                           check=True, capture_output=True)
            measured = ncu_times(exe, tmp)
            predicted = ptxc_times(exe, gpu, tmp)
            rows += [(name, k, m, p) for (k, m), (_, p) in zip(measured, predicted)]
    return rows


def ncu_times(exe: str, cwd: str) -> list:
    out = subprocess.run(["ncu", "--csv", "--metrics", "gpu__time_duration.sum", exe],
                         capture_output=True, text=True, cwd=cwd).stdout
    lines = [ln for ln in out.splitlines() if ln.startswith('"')]
    rows = list(csv.DictReader(lines))
    return [(r["Kernel Name"], float(r["Metric Value"].replace(",", "")) *
             {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3}.get(r["Metric Unit"], 1e-9))
            for r in rows if r.get("Metric Name") == "gpu__time_duration.sum"]


def ptxc_times(exe: str, gpu: str, cwd: str) -> list:
    out = os.path.join(cwd, "p.json")
    subprocess.run([sys.executable, "-m", "ptxc.cli", "run", "--topdown", "--gpu", gpu,
                    "--format", "json", "-o", out, "--", exe], capture_output=True, cwd=cwd)
    with open(out) as fh:
        doc = json.load(fh)
    return [(r["kernel"], r["predicted_seconds"]) for r in doc["predict"]["launches"]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--params", default=None)
    ap.add_argument("--case", action="append", default=None)
    ap.add_argument("--apps", action="store_true")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "bench", "predict_validate.csv"))
    a = ap.parse_args(argv)
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - no CuPy, no driver, no device
        print(f"predict_validate: needs a CUDA GPU and CuPy ({type(e).__name__}: {e})",
              file=sys.stderr)
        return 1
    rows = events_mode(cp, a.case or CASES, a.gpu, a.params)
    if a.apps and shutil.which("ncu"):
        rows += apps_mode(a.gpu)
    with open(a.output, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case", "kernel", "measured_us", "predicted_us", "error_pct"])
        for case, k, m, p in rows:
            w.writerow([case, k, f"{m * 1e6:.3f}", f"{p * 1e6:.3f}",
                        f"{100 * (p - m) / m:.1f}"])
    print(f"{len(rows)} launches, MAPE {mape(rows):.1f} % on "
          f"{cp.cuda.runtime.getDeviceProperties(0)['name']} (model {a.gpu}); {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
