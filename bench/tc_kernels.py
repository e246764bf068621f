"""Tensor-core and texture kernels (issue 29's slow cuda-samples, issue 25's
measured classes): compile time, stack frame and run rate, this tree against
an older commit, in the same run.

The kernels of tests/cuda/tc_kernels.cu (nvcc -O3, sm_90): fully unrolled
wmma GEMM tiles (f16 with 16 to 256 ``wmma.mma``, bf16, s8, tf32, f64),
``ldmatrix`` + ``mma.sync`` through shared memory, simplePitchLinearTexture's
shift kernel and HSOpticalFlow's derivative stencil. Each is launched in
full mode through ``ptxc.launch`` (PTXC_CACHE=0, PTXC_OPT=0: level-0 kernel
code, what a kernel of more than 4,000 instructions always runs; since
backends/llvm/helper_lib.py the matrix and texture helpers are O2 whatever
the kernel's level) in a child
process per tree; the trees alternate (--rounds), each kernel's best is kept.
Times are CPU seconds of the process (``time.process_time``; the launches
run on one worker thread), which a loaded machine disturbs far less than
wall time. Per kernel: compile seconds (the first launch's CPU time less a
later launch's), the level-0 stack frame of ``run_warp`` (bench/tc_profile.py,
from the emitted assembly), thread instructions per CPU second of a launch
(best of --repeat),
its share of the collatz ALU reference measured in the same child, the
GEMMs' multiply-adds per second (M N K / run time: one thread instruction of
a tensor-core kernel is 64 to 128 multiply-adds), and old / new ratios. Outputs are compared with numpy (GEMMs: small integers,
so every sum is exact) or, for the optical-flow stencil, with the texture
fetch's Python path (``texture_native.disabled()``) on a small image; a
mismatch is marked ``!``. Nothing is asserted.

The old tree is checked out with ``git worktree add`` under /tmp and run by
pointing this venv's editable install at it (bench/parallel_ctas.py).

``--new COMMIT`` measures that commit (another worktree) instead of this tree.

Usage: python bench/tc_kernels.py [--old COMMIT] [--new COMMIT] [--repeat N]
                                  [--rounds N] [--kernels a,b] [--no-old]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from trees import old_tree, use_tree   # bench/trees.py (python bench/X.py puts bench/ on sys.path)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PTX = ROOT / "tests" / "cuda" / "tc_kernels.sm90.ptx"
COLLATZ = HERE / "kernels" / "collatz.ptx"


# ------------------------------------------------------------ the cases
def gemm_case(name, dtype, K, M=512, N=512, tile=32, acc=None, lo=-2, hi=3):
    """A wmma GEMM: A (M x K row-major), B given n-major (N x K), C = A B."""
    import numpy as np
    rng = np.random.default_rng(1)
    a = rng.integers(lo, hi, (M, K))
    b = rng.integers(lo, hi, (N, K))
    want = (a @ b.T).astype(acc or np.float32)

    def make():
        if dtype == "bf16":
            cast = lambda x: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731
            A, B = cast(a), cast(b)
        else:
            A, B = a.astype(dtype), b.astype(dtype)
        return [A, B, np.zeros((M, N), acc or np.float32), N]
    return name, (N // tile, M // tile), (32,), make, 2, want, M * N * K


def cases():
    import numpy as np
    out = [gemm_case(f"wmma_f16_k{k}", np.float16, 16 * k) for k in (4, 16, 64)]
    out += [gemm_case("wmma_bf16_k16", "bf16", 256),
            gemm_case("wmma_s8_k16", np.int8, 256, acc=np.int32, lo=-128, hi=128),
            gemm_case("wmma_tf32_k16", np.float32, 128),
            gemm_case("wmma_f64_k16", np.float64, 64, tile=16, acc=np.float64)]
    rng = np.random.default_rng(2)
    a = rng.integers(-2, 3, (16, 512))
    bt = rng.integers(-2, 3, (8, 512))
    out.append(("mma_ldmatrix_k32", (256,), (32,),
                lambda: [a.astype(np.float16), bt.astype(np.float16), np.zeros((16, 8), np.float32)],
                2, (a @ bt.T).astype(np.float32), 256 * 16 * 8 * 512))
    return out


def tex_cases(ptxc):
    import numpy as np
    rng = np.random.default_rng(3)
    w = h = 1024
    img = rng.random((h, w)).astype(np.float32)
    shift = ptxc.texture(img, filter="point", address="wrap", normalized=True)
    want = np.roll(np.roll(img, -3, axis=1), -5, axis=0)
    yield ("tex_shift", (w // 16, h // 16), (16, 16),
           lambda: [np.zeros((h, w), np.float32), w, w, h, 3, 5, shift], 0, want, 0)
    fw = fh = 512
    src, dst = (rng.random((fh, fw)).astype(np.float32) for _ in range(2))
    ts, tt = (ptxc.texture(x, filter="linear", address="mirror", normalized=True) for x in (src, dst))
    yield ("flow_derivatives", (fw // 32, fh // 8), (32, 8),
           lambda: [fw, fh, fw] + [np.zeros((fh, fw), np.float32) for _ in range(3)] + [ts, tt], 3, None, 0)


def flow_checked(ptxc, module) -> bool:
    """The stencil on 64 x 64 pixels: native fetches == the Python path, bit for bit."""
    import numpy as np
    from ptxc.backends.llvm.ops import texture_native
    rng = np.random.default_rng(4)
    n = 64
    ts, tt = (ptxc.texture(rng.random((n, n)).astype(np.float32), filter="linear", address="mirror",
                           normalized=True) for _ in range(2))
    outs = []
    for native in (True, False):
        args = [n, n, n] + [np.zeros((n, n), np.float32) for _ in range(3)] + [ts, tt]
        if native:
            ptxc.launch(module, "flow_derivatives", (2, 8), (32, 8), args, mode="full")
        else:
            with texture_native.disabled():
                ptxc.launch(module, "flow_derivatives", (2, 8), (32, 8), args, mode="full")
        outs.append(np.concatenate([x.view(np.uint32).ravel() for x in args[3:6]]))
    return bool(np.array_equal(*outs))


# ------------------------------------------------------------ the worker
def alu_rate(ptxc, repeat: int) -> float:
    import time

    import numpy as np
    m = ptxc.load(str(COLLATZ))
    n = 1 << 20
    run = lambda: ptxc.launch(m, "collatz", (n // 256,), (256,), [np.zeros(n, np.uint32), n, 1],  # noqa: E731
                              mode="full", threads=1)
    run()
    best = 0.0
    for _ in range(repeat):
        t0 = time.process_time()
        prof = run()
        best = max(best, prof.counters()["thread_inst_executed"] / (time.process_time() - t0))
    return best


def worker(root: str, repeat: int, names: list) -> None:
    """Run every case in this process on the tree ``root``; print JSON."""
    import time
    use_tree(root)
    import numpy as np
    import ptxc
    assert ptxc.__file__.startswith(root), ptxc.__file__
    sys.path.insert(0, str(HERE))
    from tc_profile import profile
    module = ptxc.load(str(PTX))
    out = {"alu": alu_rate(ptxc, repeat)}
    for name, grid, block, make, k_out, want, macs in [*cases(), *tex_cases(ptxc)]:
        if names and name not in names:
            continue
        fresh = ptxc.load(str(PTX))                     # compiled kernels are cached per module
        args = make()
        t0 = time.process_time()
        prof = ptxc.launch(fresh, name, grid, block, args, mode="full", threads=1)
        first = time.process_time() - t0
        best, wall, ok = float("inf"), float("inf"), True
        for _ in range(repeat):
            args = make()
            t0 = time.process_time()
            prof = ptxc.launch(fresh, name, grid, block, args, mode="full", threads=1)
            best = min(best, time.process_time() - t0)
            wall = min(wall, prof.timings["run"])
            if want is not None and not np.array_equal(args[k_out], want):
                ok = False
        compile_s = max(first - best, 0.0)
        if name == "flow_derivatives":
            ok = flow_checked(ptxc, module)
        p = profile(module, module.function(name))
        out[name] = {"compile": compile_s, "run": best, "wall": wall, "ok": ok, "frame": p["frame"],
                     "inst": prof.counters()["thread_inst_executed"], "ptx": p["ptx"],
                     "mma": p["count"].get("wmma.mma", 0) + p["count"].get("mma", 0), "macs": macs,
                     "alu": out["alu"]}
    print(json.dumps(out))


# ------------------------------------------------------------ the driver
def child(root: Path, repeat: int, kernel: str) -> dict:
    """One kernel on one tree in a process of its own: a process that dies
    (the old tree's stack overflow on big unrolled kernels) gives
    {"crash": exit status}."""
    env = dict(os.environ, PTXC_CACHE="0", PTXC_PROGRESS="0", PTXC_OPT="0")
    proc = subprocess.run([sys.executable, __file__, "--worker", str(root), "--repeat", str(repeat),
                           "--kernels", kernel], capture_output=True, text=True, env=env, cwd=str(ROOT))
    if proc.returncode != 0:
        print(f"# {kernel} on {root}: exit status {proc.returncode} {proc.stderr[-300:]}", flush=True)
        return {"alu": 0.0, kernel: {"crash": proc.returncode}}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def merge(runs: list) -> dict:
    """Best of the rounds per kernel (the ALU reference: the best of all)."""
    best = {"alu": max(r["alu"] for r in runs)}
    for k in {k for r in runs for k in r if k != "alu"}:
        rs = [r[k] for r in runs if k in r]
        if any("crash" in r for r in rs):
            best[k] = next(r for r in rs if "crash" in r)
            continue
        best[k] = dict(rs[0], compile=min(r["compile"] for r in rs), run=min(r["run"] for r in rs),
                       ok=all(r["ok"] for r in rs), alu=max(r["alu"] for r in rs))
    return best


KERNELS = ("wmma_f16_k4,wmma_f16_k16,wmma_f16_k64,wmma_bf16_k16,wmma_s8_k16,wmma_tf32_k16,"
           "wmma_f64_k16,mma_ldmatrix_k32,tex_shift,flow_derivatives")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--old", default="f554c15")
    ap.add_argument("--no-old", action="store_true")
    ap.add_argument("--new", default="", help="a commit to measure instead of this tree")
    ap.add_argument("--kernels", default="")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    names = [n for n in opts.kernels.split(",") if n]
    if opts.worker:
        return worker(opts.worker, opts.repeat, names)
    new_root = old_tree(opts.new) if opts.new else ROOT
    trees = {"new": new_root} if opts.no_old else {"new": new_root, "old": old_tree(opts.old)}
    runs = {t: [] for t in trees}
    for _ in range(opts.rounds):
        for k in (opts.kernels or KERNELS).split(","):
            for t, root in trees.items():
                runs[t].append(child(root, opts.repeat, k))
    best = {t: merge(rs) for t, rs in runs.items()}
    new, old = best["new"], best.get("old")
    print(f"full mode, level 0, 1 thread, cache off, CPU seconds; new = this tree, old = {opts.old}; "
          f"ALU reference (collatz) new {new['alu']:.3g}" + (f", old {old['alu']:.3g}" if old else "")
          + " thread-instr/s")
    print(f"{'kernel':18} {'ptx':>5} {'mma':>4} {'compile s':>10} {'frame KiB':>10} {'thr-inst/s':>10} "
          f"{'of ALU':>7} {'MAC/s':>8}" + (f" {'old compile':>11} {'old frame':>10} {'old inst/s':>10} {'of ALU':>7} "
                             f"{'compile o/n':>11} {'run o/n':>8}" if old else ""))
    for k in (opts.kernels or KERNELS).split(","):
        r = new[k]
        if "crash" in r:
            print(f"{k:18} crashed (exit status {r['crash']})")
            continue
        rate = r["inst"] / r["run"]
        line = (f"{k:18} {r['ptx']:5d} {r['mma']:4d} {r['compile']:10.2f} {r['frame'] / 1024:10.1f} "
                f"{rate:10.3g} {rate / r['alu']:7.2%} {r['macs'] / r['run'] if r['macs'] else 0:8.2g}"
                f"{'' if r['ok'] else ' !'}")
        if old and "crash" in old.get(k, {}):
            line += f" {'crashed (exit status ' + str(old[k]['crash']) + ')':>40}"
        elif old and k in old:
            o = old[k]
            orate = o["inst"] / o["run"]
            line += (f" {o['compile']:11.2f} {o['frame'] / 1024:10.1f} {orate:10.3g} {orate / o['alu']:7.2%}"
                     f"{'' if o['ok'] else ' !'} {o['compile'] / r['compile']:11.2f} {o['run'] / r['run']:8.2f}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
