"""The speed measures of `ptxc profile` (bench/README.md, docs/profile.md
"Speed") change no number: code generation overlapped with LLVM in chunks
(backends/llvm/pipeline.py), the kernels shared by forked processes
(ptxc/profile/fork.py), no cyclic GC in a CLI process (cli.pause_gc).

Kernels: tests/cuda/launch_infer.cu (9 kernels; nvcc 13, -arch=sm_90 -O3,
see test_module_profile.py). The reference for the pipelined compile is the
same module compiled as one chunk (one LLVM module), whose counters
test_module_profile.py checks against hand-derived numbers; here every
counter of every row must be equal, so a chunk that lost, mixed up or
recompiled a kernel differently fails.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ptxc
from ptxc.backends.llvm import pipeline
from ptxc.profile.module_profile import profile_module
from ptxc.profile.module_render import to_dict

HERE = Path(__file__).resolve().parent
INFER_PTX = HERE / "cuda" / "launch_infer.sm90.ptx"


def rows(mp) -> list:
    """The rows of a module profile without the times."""
    out = []
    for k in to_dict(mp)["kernels"]:
        k.pop("seconds", None)
        if "profile" in k:
            k["profile"].pop("timings", None)
        out.append(k)
    return out


@pytest.mark.parametrize("n, sizes", [
    (0, [0]), (23, [23]),                  # fewer than 2 x PIPELINE_MIN (12): one chunk
    (24, [12, 12]),                        # 24 // 12 = 2 chunks of ceil(24 / 2)
    (50, [13, 13, 13, 11]),                # 50 // 12 = 4 chunks of ceil(50 / 4) = 13
    (108, [27, 27, 27, 27]),               # at most 4 chunks: ceil(108 / 4) = 27
])
def test_chunks_split_in_order(n, sizes):
    todo = list(range(n))
    parts = pipeline.chunks(todo)
    assert [len(p) for p in parts] == sizes
    assert [x for p in parts for x in p] == todo


@pytest.mark.parametrize("mode", ["hybrid", "full"])
def test_pipelined_compile_gives_the_same_rows(monkeypatch, mode):
    monkeypatch.setenv("PTXC_CACHE", "0")
    one = profile_module(ptxc.load(str(INFER_PTX)), mode=mode)     # 9 kernels: one chunk
    threads = []
    start = pipeline._Worker.start

    def spy(self):
        threads.append(self.name)
        start(self)
    monkeypatch.setattr(pipeline._Worker, "start", spy)
    monkeypatch.setattr(pipeline, "PIPELINE_MIN", 2)      # the kernels that run -> several chunks
    many = profile_module(ptxc.load(str(INFER_PTX)), mode=mode)
    assert threads == ["ptxc-llvm"]
    assert any(r["status"] == "ran" for r in rows(one))
    assert rows(many) == rows(one)


def test_an_llvm_error_in_the_worker_reaches_the_caller():
    class Named:
        def __init__(self, name):
            self.name = name

    def generate(part):
        return [(Named(f"k{k}"), Named(f"f{k}"), "text") for k in part]

    def objects(unique, names):
        if "f30" in unique:
            raise RuntimeError("emit failed")
        return [b"obj"], len(unique)

    with pytest.raises(RuntimeError, match="emit failed"):
        pipeline.compile_pipelined(list(range(40)), generate, objects, lambda objs: objs)
    made, engine, compiled, _ = pipeline.compile_pipelined(
        list(range(25)), generate, lambda u, n: ([b"o"] * len(u), len(u)), lambda objs: objs)
    assert [k.name for k, _, _ in made] == [f"k{i}" for i in range(25)]
    assert compiled == 25 and engine == [b"o"] * 25          # 2 chunks: 13 + 12 objects
    assert not [t for t in threading.enumerate() if t.name == "ptxc-llvm"]


SHOW_GC = """
import atexit, gc, sys
import ptxc.cli.main
atexit.register(lambda: print("gc enabled:", gc.isenabled()))
sys.argv = ["ptxc", "profile", "--format=csv", sys.argv[1]]
ptxc.cli.main.main()
"""


def test_cli_process_runs_without_gc_but_in_process_calls_keep_it():
    env = dict(os.environ, PTXC_CACHE="0")
    r = subprocess.run([sys.executable, "-c", SHOW_GC, str(INFER_PTX)], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip().endswith("gc enabled: False")
    from click.testing import CliRunner

    from ptxc.cli.main import cli
    import gc
    assert gc.isenabled()
    CliRunner().invoke(cli, ["profile", "--format=csv", str(INFER_PTX)], catch_exceptions=False)
    assert gc.isenabled()


# Runs `ptxc profile` as the program (so that it may fork) with MIN_KERNELS = 1,
# counting the forks; CHILD_FAILS makes every child exit without a result.
FORKED = """
import os, sys
import ptxc.cli.main, ptxc.profile.fork as pf
pf.MIN_KERNELS = 1
forks = []
fork = os.fork
def spy():
    pid = fork()
    if pid:
        forks.append(pid)
    return pid
os.fork = spy
if os.environ.get("CHILD_FAILS"):
    pf._run_group = lambda *a: os._exit(3)
import atexit
atexit.register(lambda: print("forks:", len(forks), file=sys.stderr))
sys.argv = ["ptxc", "profile", "--format=json", *sys.argv[1:]]
ptxc.cli.main.main()
"""


def forked_rows(*args, **env) -> tuple:
    import json
    full = dict(os.environ, PTXC_CACHE="0", **env)
    r = subprocess.run([sys.executable, "-c", FORKED, *args, str(INFER_PTX)],
                       capture_output=True, text=True, env=full)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    for k in d["kernels"]:
        k.pop("seconds", None)
        if "profile" in k:
            k["profile"].pop("timings", None)
    forks = int(r.stderr.rsplit("forks:", 1)[1])
    return d["kernels"], d["total"], forks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_kernels_in_forked_processes_give_the_serial_rows():
    serial, total, forks = forked_rows("-j1")
    assert forks == 0 and any(k["status"] == "ran" for k in serial)
    forked, total3, forks = forked_rows("-j3")
    assert forks == 2                           # two children, the parent runs the third share
    assert forked == serial and total3 == total
    failed, total_f, forks = forked_rows("-j3", CHILD_FAILS="1")
    assert forks == 2 and failed == serial and total_f == total     # the parent ran their kernels


def test_processes_needs_min_kernels_each():
    from ptxc.profile.fork import MIN_KERNELS, processes
    assert processes(1000, None) == 1 and processes(1000, 1) == 1
    if sys.platform.startswith("linux"):
        assert processes(2 * MIN_KERNELS - 1, 8) == 1
        assert processes(2 * MIN_KERNELS, 8) == 2
        assert processes(100 * MIN_KERNELS, 8) == 8
