"""Stream-ordered allocation, memory pools and graph memory nodes under
``ptxc run`` (docs/runtime.md "Memory pools" and "Graph memory nodes"):
tests/cuda_apps/stream_alloc.cu and graph_memory.cu, built with nvcc at test
time (skipped without nvcc), and the layouts and enum values of
native/mempool.h against CUDA 13's headers.

The pool counters follow ptxc's documented model (mempool.h): used bytes are
each live allocation rounded up to 512, reserved bytes are 2 MiB chunks, at
least the used bytes rounded up to a chunk, kept after frees until a
synchronising call releases what lies above the release threshold, or
cudaMemPoolTrimTo. Graph memory: each live graph allocation uses its size
rounded up to 2 MiB; reserved is the most used since cudaDeviceGraphMemTrim.
Every expected counter below is derived from that model by hand; sums are
recomputed with numpy in float32, as the kernels compute them.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from runtime_apps import AppBuilder, run_ptxc
from test_runtime_native import NATIVE, cuda_include, run_c

N = 1000
KIB4 = 4096                 # 4000 bytes (N floats) rounded up to 512
MIB = 1 << 20
CHUNK = 2 * MIB


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("mempool_apps"))


def run_both(app, *args):
    """full and hybrid runs: same output and same launches; the full run"""
    runs = {m: run_ptxc(app, *args, mode=m) for m in ("full", "hybrid")}
    for m, r in runs.items():
        assert r.returncode == 0, (m, r.proc.stdout, r.proc.stderr)
        assert r.proc.stdout.rstrip().endswith("PASS"), (m, r.proc.stdout)
    assert runs["full"].proc.stdout == runs["hybrid"].proc.stdout
    cols = "kernel, graph, inst_executed, thread_inst_executed, branch"
    rows = {m: r.rows(f"SELECT {cols} FROM launches ORDER BY id") for m, r in runs.items()}
    assert rows["full"] == rows["hybrid"]
    return runs["full"], rows["full"]


def values(out: str, prefix: str) -> list:
    """the numbers of the line that starts with prefix + ' '"""
    m = re.search(r"^%s ([\d. -]+)$" % re.escape(prefix), out, re.M)
    assert m, (prefix, out)
    return [float(v) if "." in v else int(v) for v in m.group(1).split()]


def codes(out: str) -> dict:
    return {k: int(v) for k, v in re.findall(r"^(.+) -> (\d+)$", out, re.M)}


# ------------------------------------------------------- stream_alloc.cu
@pytest.fixture(scope="module")
def stream_alloc(apps):
    return run_both(apps.build("stream_alloc"))


def test_stream_ordered_results(stream_alloc):
    """c = a + b with a[i] = i/2, b[i] = 1000 - i + L, in float32"""
    out = stream_alloc[0].proc.stdout
    i = np.arange(N)
    a = (i / np.float32(2)).astype(np.float32)

    def total(L):
        return float((a + (1000 - i + L).astype(np.float32)).astype(np.float64).sum())
    assert values(out, "basic sum") == [round(total(0), 1)]
    assert values(out, "postsync sum") == [round(sum(total(L) for L in range(1, 11)), 1)]
    assert "pools supported 1 handle types 0" in out


def test_pool_counters(stream_alloc):
    """(used, used_high, reserved, reserved_high) after each step:
    three 4000-byte allocations use 3 x 4096 in one chunk; threshold 0
    releases the chunk at the synchronize, UINT64_MAX keeps it; 3 MiB uses 2
    chunks; TrimTo(1 MiB) keeps one chunk, TrimTo(0) none; resetting the
    highs sets them to the current values (0)."""
    out = stream_alloc[0].proc.stdout
    assert values(out, "start") == [0, 0, 0, 0]
    assert values(out, "basic") == [0, 3 * KIB4, 0, CHUNK]
    assert values(out, "postsync") == [0, 3 * KIB4, CHUNK, CHUNK]
    assert values(out, "big") == [3 * MIB, 3 * MIB, 2 * CHUNK, 2 * CHUNK]
    assert values(out, "big freed") == [0, 3 * MIB, 2 * CHUNK, 2 * CHUNK]
    assert values(out, "trim 1MiB") == [0, 3 * MIB, CHUNK, 2 * CHUNK]
    assert values(out, "trim 0") == [0, 3 * MIB, 0, 2 * CHUNK]
    assert values(out, "reset") == [0, 0, 0, 0]
    # the created pool: 100 bytes (512) from it, then 513 bytes (1024) as the current pool
    assert values(out, "mine") == [512 + 1024, 512 + 1024, CHUNK, CHUNK]
    assert values(out, "default") == [0, 0, 0, 0]


def test_pool_rules(stream_alloc):
    out = stream_alloc[0].proc.stdout
    for line in ("current is default 1", "current is mine 1", "current is default again 1",
                 "threshold max 1", "opportunistic 0", "follow events 1", "access 3"):
        assert line in out
    assert codes(out) == {
        "set used high 5": 1, "set used current": 1,            # cudaErrorInvalidValue
        "get attribute of a destroyed pool": 1, "destroy default pool": 1,
        "default pool of device 1": 101,                        # cudaErrorInvalidDevice
        "bad pool": 1, "double free": 1, "free inside": 1, "read-only access": 1,
        "ipc pool": 801, "export": 801}                         # cudaErrorNotSupported


def test_pool_ipc_is_named(stream_alloc):
    err = stream_alloc[0].proc.stderr
    for call in ("cudaMemPoolCreate", "cudaMemPoolExportToShareableHandle"):
        assert (f"ptxc: {call}: memory pool IPC is not supported (the device has no pool handle "
                "types); returns cudaErrorNotSupported") in err


def test_stream_ordered_launches(stream_alloc):
    _, rows = stream_alloc
    assert [r["kernel"] for r in rows] == ["_Z10vector_addPKfS0_Pfi"] * 11
    assert all(r["graph"] is None for r in rows)


def test_use_after_free_async(apps):
    r = run_ptxc(apps.build("stream_alloc"), "uaf", mode="full")
    assert r.returncode == 1
    assert "reading freed memory" in r.proc.stdout and "not reached" not in r.proc.stdout
    assert re.search(r"kernel sum_of\(float const\*, float\*, int\).*out-of-bounds access.*"
                     r"\(freed allocation #\d+ \(cudaMalloc 4000 bytes\) \+ 0\)", r.proc.stderr)


def check(app):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", "check", "--leak-check", "full", "--",
                           app], capture_output=True, text=True, timeout=300,
                          cwd=os.path.dirname(app))


def test_memcheck_of_stream_ordered_frees(apps):
    """ptxc check: the two frees of freed memory (the double free and the
    free inside a freed allocation) are the run's only errors; every
    allocation was freed (no leak)"""
    r = check(apps.build("stream_alloc"))
    assert r.returncode == 1, r.stderr        # ptxc check found errors
    text = r.stdout + r.stderr
    assert text.count("on CUDA API call to cudaFreeAsync") == 2
    assert len(re.findall(r"freed allocation #\d+ \(cudaMalloc (?:16|100) bytes\) \+ [04]: "
                          r"already freed \(a double free\)", text)) == 2
    assert "LEAK SUMMARY: 0 bytes leaked in 0 allocations" in text
    assert "ERROR SUMMARY: 2 errors" in text


# ------------------------------------------------------- graph_memory.cu
@pytest.fixture(scope="module")
def graph_memory(apps):
    return run_both(apps.build("graph_memory"))


def squares(R):
    i = np.arange(N)
    x = (i % 100).astype(np.float32) / np.float32(10) + np.float32(R)
    return (x * x).astype(np.float32)


def test_negate_squares(graph_memory):
    """every run R: square = x^2 and negSquare = -x^2 with x = (i%100)/10 + R;
    'kept plus one' reads negSquare after add_one: -x^2 + 1"""
    out = graph_memory[0].proc.stdout
    names = ["stream", "captured", "captured again", "explicit", "kept plus one", "relaunched",
             "freed by a graph", "auto free", "auto free"]
    got = re.findall(r"^(.+) sums (-?[\d.]+) (-?[\d.]+)$", out, re.M)
    assert [g[0] for g in got] == names
    for (name, s, q), R in zip(got, [0, 1, 2, 3, 4, 5, 6, 7, 8]):
        sq = squares(R)
        neg = (-sq + np.float32(1)).astype(np.float32) if name == "kept plus one" else -sq
        assert (float(s), float(q)) == (round(float(sq.astype(np.float64).sum()), 2),
                                        round(float(neg.astype(np.float64).sum()), 2)), name


def test_memory_node_graphs(graph_memory):
    """3 allocations, 3 copies, 2 kernels, 3 frees, captured (events make no
    nodes) or explicit; cloning a graph with memory nodes: 801; a second
    executable graph while one exists: 1"""
    out = graph_memory[0].proc.stdout
    assert "captured: 11 nodes, 3 alloc, 3 free" in out
    assert "explicit: 11 nodes, 3 alloc, 3 free" in out
    assert "same address 1" in out
    assert codes(out) == {"free node of cudaMalloc memory": 1, "second free node": 1,
                          "free node inside an allocation": 1, "clone": 801,
                          "relaunch with an unfreed allocation": 1,
                          "second instantiation": 1,
                          "free node in the owning graph after another graph's": 1}


def test_graph_memory_counters(graph_memory):
    """(used, used_high, reserved, reserved_high), each live allocation 2 MiB:
    the explicit graph without its last free runs alloc in, alloc square
    (2 live), free in, alloc negSquare (2 live), free square: 1 live at the
    end, 2 at most; the trim releases what nothing uses."""
    out = graph_memory[0].proc.stdout
    assert values(out, "graphmem start") == [0, 0, 0, 0]
    assert values(out, "graphmem reset") == [0, 0, 0, 0]
    assert values(out, "graphmem kept") == [CHUNK, 2 * CHUNK, 2 * CHUNK, 2 * CHUNK]
    assert values(out, "graphmem freed") == [0, 2 * CHUNK, 2 * CHUNK, 2 * CHUNK]
    assert values(out, "graphmem trimmed") == [0, 2 * CHUNK, 0, 2 * CHUNK]
    assert values(out, "graphmem all freed") == [0, 2 * CHUNK, 2 * CHUNK, 2 * CHUNK]
    assert values(out, "graphmem end") == [0, 2 * CHUNK, 2 * CHUNK, 2 * CHUNK]


def test_graph_memory_launches(graph_memory):
    """kernel nodes run in order; `graph` numbers the graph launches that
    ran: captured 1, 2; explicit 3; kept 4 (then add_one on the stream); the
    refused relaunch runs nothing; relaunched 5, 6; the free graph 7 (no
    kernels); AutoFreeOnLaunch 8, 9"""
    _, rows = graph_memory
    sq, neg, one = "_Z12square_arrayPKfPfi", "_Z12negate_arrayPKfPfi", "_Z7add_onePfi"
    kernels = [sq, neg] * 5 + [one] + [sq, neg] * 4
    graphs = [None, None, 1, 1, 2, 2, 3, 3, 4, 4, None, 5, 5, 6, 6, 8, 8, 9, 9]
    assert [(r["kernel"], r["graph"]) for r in rows] == list(zip(kernels, graphs))


def test_use_after_graph_free(apps):
    r = run_ptxc(apps.build("graph_memory"), "uaf", mode="full")
    assert r.returncode == 1
    assert "not reached" not in r.proc.stdout
    assert re.search(r"kernel add_one\(float\*, int\).*out-of-bounds access.*"
                     r"\(freed allocation #\d+ \(graph allocation 4000 bytes\) \+ 0\)",
                     r.proc.stderr)


# -------------------------------------------------------- driver_pool.cu
def test_driver_pools(apps):
    """cuMemAllocAsync: 4000 bytes -> used 4096, one chunk; a kernel writes
    3i (sum 3 x 499500); the driver's codes: CUDA_ERROR_INVALID_VALUE (1),
    CUDA_ERROR_INVALID_DEVICE (101)"""
    r = run_ptxc(apps.build("driver_pool"), mode="full")
    assert r.returncode == 0, r.proc.stderr
    assert r.proc.stdout.splitlines() == [
        "current is default 1", f"sum {3 * 499500}", f"pool {KIB4} {CHUNK}", "freed 0",
        "double free -> 1", "mine 512", "destroy default -> 1", "device 1 -> 101", "PASS"]


def test_memcheck_of_graph_memory(apps):
    """graph allocations freed in and outside their graphs: no errors, no leak"""
    r = check(apps.build("graph_memory"))
    assert r.returncode == 0, r.stderr
    text = r.stdout + r.stderr
    assert "LEAK SUMMARY: 0 bytes leaked in 0 allocations" in text
    assert "ERROR SUMMARY: 0 errors" in text


# ------------------------------------------------ layouts against CUDA 13
STRUCTS = ("cudaMemLocation", "cudaMemAccessDesc", "cudaMemPoolProps", "cudaMemAllocNodeParams")


def fields(name: str) -> list:
    text = open(os.path.join(NATIVE, "mempool.h")).read()
    body = re.search(r"struct %s \{(.*?)\};" % name, text, re.S).group(1)
    return re.findall(r"(\w+)(?:\[\d+\])?;", body)


def layout_program(include: str) -> str:
    lines = [include, "#include <stdio.h>", "#include <stddef.h>", "int main(void) {"]
    for s in STRUCTS:
        lines.append(f'printf("{s} %zu\\n", sizeof(struct {s}));')
        for f in fields(s):
            lines.append(f'printf("{s}.{f} %zu\\n", offsetof(struct {s}, {f}));')
    lines.append("return 0; }")
    return "\n".join(lines)


def test_mempool_layouts_match_cuda_headers(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    real = run_c(tmp_path, "real", layout_program("#include <cuda_runtime_api.h>"), [inc])
    ours = run_c(tmp_path, "ours", layout_program('#include "mempool.h"'), [NATIVE])
    assert ours == real and real.count("\n") > 15


def test_mempool_enum_values_match_cuda_headers(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    text = open(os.path.join(NATIVE, "mempool.h")).read()
    text += open(os.path.join(NATIVE, "graph.h")).read()
    ours = {n: int(v) for n, v in re.findall(r"\b(cuda(?:Mem|GraphMem|GraphInstantiateFlag|"
                                             r"GraphNodeTypeMem)\w*) = (\d+)", text)}
    assert len(ours) > 25
    prog = ["#include <cuda_runtime_api.h>", "#include <stdio.h>", "int main(void) {"]
    prog += [f'printf("{n} %d\\n", (int){n});' for n in ours]
    prog.append("return 0; }")
    out = run_c(tmp_path, "enums", "\n".join(prog), [inc])
    assert {n: int(v) for n, v in (line.split() for line in out.splitlines())} == ours
