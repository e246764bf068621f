"""Barriers, atomics, arrive/wait barriers, textures and clock spins: thread
instructions per second of each class, this tree against an older one
(``--before TREE``, e.g. a ``git worktree add /tmp/before 5d0f45a``), in the
same run, interleaved, and the Python callbacks per launch (issue 25;
docs/performance-sync.md).

    .venv/bin/python bench/sync_paths.py --before /tmp/before [--repeat 3]

Each tree runs in a child process of its own (the editable install's module
finder pointed at the tree), alternating old, new, old, new ... ``--repeat``
times; a child compiles every case once (warm-up launch), then times one
launch per case (full mode, default worker threads). The kernels are this
tree's files (bench/kernels/sync_paths.cu, tests/cuda/mbarrier.cu,
tests/cuda/textures.cu, tests/cuda/clock_spin.cu, bench/kernels/loop.cu),
run by both trees. Reported per case: the best rate of each tree, the ratio
new / old, the rate over the ALU reference (loop_fma) of the same child,
and the native-to-Python callbacks of one launch (new tree; the old one
cannot count them), also with every tex sent through Python ("via Python":
texture_native.disabled(), what the old tree did).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
K = os.path.join(HERE, "kernels")
CU = os.path.join(ROOT, "tests", "cuda")


def cases(np, ptxc):
    """{name: (module path, kernel, grid, block, args)}; a fresh argument list per call."""
    rng = np.random.default_rng(7)
    n = 1 << 22
    data = rng.integers(0, 1 << 30, n).astype(np.uint32)
    fl = rng.uniform(-1, 1, n).astype(np.float32)
    img = rng.uniform(-2, 2, (1024, 256)).astype(np.float32)
    ints = np.arange(3 << 18, dtype=np.int32)
    surf_data = rng.integers(-1000, 1000, (1024, 256)).astype(np.int32)
    tex_pt = ptxc.texture(img, filter="point", address="clamp")
    tex_lin = ptxc.texture(img, filter="linear", address="wrap", normalized=True)
    tex_lin_mem = ptxc.texture(ints, linear=True)
    sp, mb, tx, ck = (os.path.join(K, "sync_paths.ptx"), os.path.join(CU, "mbarrier.sm90.ptx"),
                      os.path.join(CU, "textures.sm90.ptx"), os.path.join(CU, "clock_spin.sm90.ptx"))
    return {
        "alu_loop_fma": (os.path.join(K, "loop.ptx"), "loop_fma", 256, 256,
                         lambda: [np.zeros(1 << 16, np.float32), 1 << 16, 256]),
        "hist_shared_atomics": (sp, "hist_shared", 64, 256,
                                lambda: [data, np.zeros(256, np.uint32), n]),
        "reduce_syncthreads": (sp, "reduce_sync", n // 512, 256,
                               lambda: [fl, np.zeros(n // 512, np.float32), n]),
        "global_atomics": (sp, "atom_global", (n // 4) // 256, 256,
                           lambda: [np.zeros(65, np.int32), np.zeros(n // 4, np.int32), n // 4]),
        "mbarrier_phases": (mb, "phases", 256, 256,
                            lambda: [np.zeros(256 * 256, np.int32), 16, 200]),
        "tex2d_point": (tx, "tex2d", 1024, 256,
                        lambda: [tex_pt, np.zeros((1024, 256), np.float32), 0.3, 1.0, 0.2, 1.0, 256]),
        "tex2d_linear_wrap": (tx, "tex2d", 1024, 256,
                              lambda: [tex_lin, np.zeros((1024, 256), np.float32), -0.1, 0.0047,
                                       -0.2, 0.0013, 256]),
        "tex1dfetch": (tx, "fetch", 1024, 256,
                       lambda: [tex_lin_mem, np.zeros(1 << 18, np.int32), 3, -5, 1 << 18]),
        "surf2d_read_write": (tx, "surf_rw", 1024, 256,
                              lambda: [ptxc.surface(surf_data.copy()), 256, 1024]),
        "clock64_spin": (ck, "clock_spin", 4, 32, lambda: [2000000, np.zeros(128, np.int32)]),
    }


def child(tree: str) -> None:
    """Run every case in this process with ptxc imported from ``tree``."""
    import importlib
    finder = importlib.import_module("__editable___ptxc_0_1_0_finder")
    finder.MAPPING.update({"ptxc": os.path.join(tree, "ptxc"),
                           "ptxc.backends": os.path.join(tree, "backends"),
                           "ptxc.passes": os.path.join(tree, "passes")})
    import numpy as np
    import ptxc
    try:
        from ptxc.backends.llvm import callbacks
        counting = hasattr(callbacks, "calls")
    except ImportError:
        counting = False
    out = {"tree": os.path.dirname(ptxc.__file__)}
    mods = {}
    for name, (path, kern, grid, block, args) in cases(np, ptxc).items():
        m = mods.setdefault(path, ptxc.load(path))
        ptxc.launch(m, kern, grid, block, args(), mode="full")          # compile
        if counting:
            callbacks.reset_calls()
        dt = float("inf")
        for _ in range(2):
            t = time.perf_counter()
            prof = ptxc.launch(m, kern, grid, block, args(), mode="full")
            dt = min(dt, time.perf_counter() - t)
        calls = sum(callbacks.calls().values()) // 2 if counting else None
        out[name] = {"seconds": dt, "thread_inst": prof.counters()["thread_inst_executed"],
                     "callbacks": calls, "python_path": python_path_calls(ptxc, m, kern, grid, block,
                                                                          args, counting)}
    print(json.dumps(out))


def python_path_calls(ptxc, m, kern, grid, block, args, counting):
    """Callbacks of the launch with every tex through Python (the old path)."""
    if not counting:
        return None
    from ptxc.backends.llvm import callbacks
    from ptxc.backends.llvm.ops import texture_native
    callbacks.reset_calls()
    with texture_native.disabled():
        ptxc.launch(m, kern, grid, block, args(), mode="full")
    return sum(callbacks.calls().values())


def run_tree(tree: str) -> dict:
    env = dict(os.environ, PTXC_CACHE="0")
    r = subprocess.run([sys.executable, __file__, "--child", tree], capture_output=True, text=True,
                       env=env, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=False, help="the older tree (a git worktree)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child)
    trees = ([("before", a.before)] if a.before else []) + [("after", ROOT)]
    runs = {t: [] for t, _ in trees}
    for _ in range(a.repeat):
        for t, path in trees:
            runs[t].append(run_tree(path))
    best = {t: {} for t in runs}
    for t, rs in runs.items():
        for name in rs[0]:
            if name != "tree":
                best[t][name] = min((r[name] for r in rs), key=lambda x: x["seconds"])
    rate = {t: {n: v["thread_inst"] / v["seconds"] for n, v in b.items()} for t, b in best.items()}
    print(f"best of {a.repeat}, thread instructions per second of one full-mode launch "
          f"(warm JIT); 'of ALU' = rate / loop_fma's rate in the same tree")
    head = f"{'case':22} {'thread instr':>12}"
    for t in runs:
        head += f" {t + ' instr/s':>15} {'of ALU':>7}"
    head += f" {'after/before':>12} {'callbacks':>9} {'via Python':>10}"
    print(head)
    for name in best["after"]:
        line = f"{name:22} {best['after'][name]['thread_inst']:12d}"
        for t in runs:
            line += f" {rate[t][name]:15.3e} {rate[t][name] / rate[t]['alu_loop_fma']:7.3f}"
        if "before" in rate:
            line += f" {rate['after'][name] / rate['before'][name]:12.2f}"
        line += f" {best['after'][name]['callbacks']!s:>9} {best['after'][name]['python_path']!s:>10}"
        print(line)


if __name__ == "__main__":
    main()
