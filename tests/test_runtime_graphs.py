"""CUDA graphs, stream capture and stream attributes under ``ptxc run``
(docs/runtime.md "Graphs"): tests/cuda_apps/graphs.cu and stream_attrs.cu,
built with nvcc at test time (skipped without nvcc), and the layouts of the
shim's graph and attribute types against CUDA 13's headers.

graphs.cu runs one fork/join pipeline, built by stream capture and
explicitly, ten times (see the comment at its top); each launch L prints
the sum of c = k (i + L) + 2i + 1 over i < 1000. The test recomputes the
sums with numpy, derives the graph shapes and the kernel order of the
report from the documented run order, and compares full and hybrid runs.
"""
import os
import re

import numpy as np
import pytest

from ptxc.launcher.profile import DERIVED, TOTALS
from runtime_apps import AppBuilder, run_ptxc
from test_runtime_native import NATIVE, cuda_include, run_c

N = 1000
# scale factor k of each graph launch: captured graph (3x), explicit graph
# (3x), its executable graph after cudaGraphExecKernelNodeSetParams(k = 4),
# a clone of the explicit graph (k = 3), the k = 4 executable graph launched
# into a capture (a child graph node), the executable graph updated from the
# explicit graph by cudaGraphExecUpdate (k = 3 again)
KS = [3, 3, 3, 3, 3, 3, 4, 3, 4, 3]


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("graph_apps"))


@pytest.fixture(scope="module")
def graphs(apps):
    """graphs.cu run in both modes: (full run, its launch rows)"""
    return run_both(apps.build("graphs"))


def expected_sums():
    """Launch L starts with a_h[i] = i + L (the host node adds 1 after each
    launch): a = k (i + L), b = 2i + 1 (memset to 0, then +=), c = a + b."""
    i = np.arange(N, dtype=np.int64)
    return [int((k * (i + L) + 2 * i + 1).sum()) for L, k in enumerate(KS)]


def run_both(app):
    runs = {m: run_ptxc(app, mode=m) for m in ("full", "hybrid")}
    for m, r in runs.items():
        assert r.returncode == 0, (m, r.proc.stderr)
        assert r.proc.stdout.rstrip().endswith("PASS"), (m, r.proc.stdout)
    cols = ("kernel", "grid_x", "block_x", "stream", "graph") + TOTALS + DERIVED
    rows = {m: [{c: row[c] for c in cols} for row in r.rows("SELECT * FROM launches ORDER BY id")]
            for m, r in runs.items()}
    assert rows["full"] == rows["hybrid"]
    assert runs["full"].proc.stdout == runs["hybrid"].proc.stdout
    return runs["full"], rows["full"]


def test_graph_results(graphs):
    full, _ = graphs
    sums = [int(s) for s in re.findall(r"^launch \d+ sum (-?\d+)$", full.proc.stdout, re.M)]
    assert sums == expected_sums()


def test_graph_shapes(graphs):
    """Captured: memcpy, memset (the two roots: the fork event had no work
    before it), scale, fill_b, combine, memcpy back, host node = 7 nodes;
    edges memcpy->scale, memset->fill_b, scale->combine, fill_b->combine,
    combine->memcpy back, memcpy back->host = 6. Explicit: the same plus the
    empty join node (8 nodes; scale->empty, fill_b->empty, empty->combine
    replace the two edges into combine: 7 edges). Nested: one child node."""
    out = graphs[0].proc.stdout
    assert "captured graph: 7 nodes, 2 roots, 6 edges" in out
    assert "explicit graph: 8 nodes, 2 roots, 7 edges" in out
    assert "nested graph: 1 nodes, 1 roots, 0 edges" in out


def test_capture_dependency_updates(graphs):
    """capture_queries(): memset 1 (no deps), dependency set emptied,
    memset 2 (a root), memset 1 added back, memset 3 depends on 2 and 1:
    3 nodes, 2 roots, 2 edges. The explicit graph's combine node depends on
    the empty join node and is needed by the copy back: 1 and 1."""
    out = graphs[0].proc.stdout
    assert ("update graph: 3 nodes, 2 roots, 2 edges, last has 2 deps, same graph 1, "
            "first is node 0 1, memset 1") in out
    assert "explicit combine node: 1 deps, 1 dependents" in out


def test_graph_launches_in_the_report(graphs):
    """Nodes run in topological order, earliest added first among the ready
    ones. Captured graph (nodes added in issue order: memcpy, memset, scale,
    fill_b, combine ...): scale, fill_b, combine. Explicit graph (added:
    scale, memset, fill_b, memcpy, ...; scale waits for memcpy): memset,
    fill_b, memcpy, scale, so fill_b, scale, combine; the clone and the
    child graph node and the updated executable graph keep that order.
    Streams: s1 = 1, s2 = 2, ga = 3 (captured graph x3, the nested graph
    x1), gb = 4 (explicit x3, after set-params x1, clone x1, after the
    update x1). 10 graph launches x 3 kernel nodes = 30."""
    _, rows = graphs
    captured = ["_Z5scalePiii", "_Z6fill_bPii", "_Z7combinePiPKiS1_i"]
    explicit = ["_Z6fill_bPii", "_Z5scalePiii", "_Z7combinePiPKiS1_i"]
    assert [r["kernel"] for r in rows] == captured * 3 + explicit * 7
    assert [r["stream"] for r in rows] == [3] * 9 + [4] * 15 + [3] * 3 + [4] * 3
    assert all((r["grid_x"], r["block_x"]) == (8, 128) for r in rows)
    for name in captured:      # every launch of a kernel takes the same path
        mine = [r for r in rows if r["kernel"] == name]
        assert len(mine) == 10
        assert all(r["inst_executed"] == mine[0]["inst_executed"] > 0 for r in mine)


def test_graph_launch_numbers(graphs):
    """Every launch is a kernel node; `graph` numbers the cudaGraphLaunch
    calls that ran (graphs.cu's ten: the call that records xx into a
    capture runs nothing and is not counted), three kernel nodes each. Each
    kernel's row counts its 10 graph launches."""
    full, rows = graphs
    assert [r["graph"] for r in rows] == [n for n in range(1, 11) for _ in range(3)]
    assert [k["graph_launches"] for k in full.summary["kernels"]] == [10, 10, 10]


def test_stream_attributes(apps):
    full, rows = run_both(apps.build("stream_attrs"))
    assert [(r["kernel"], r["stream"], r["graph"]) for r in rows] == [("_Z6triplePii", 1, None)]
    assert full.summary["kernels"][0]["graph_launches"] == 0


# ------------------------------------------------ layouts against CUDA 13
GRAPH_STRUCTS = {"graph.h": ("cudaPos", "cudaMemcpy3DParms", "cudaMemsetParams",
                             "cudaHostNodeParams", "cudaKernelNodeParams",
                             "cudaGraphExecUpdateResultInfo_st"),
                 "stream_attr.h": ("cudaAccessPolicyWindow",),
                 "graph_cond.h": ("cudaConditionalNodeParams", "cudaChildGraphNodeParams",
                                  "cudaMemcpyNodeParams", "cudaGraphNodeParams")}


def fields(header: str, name: str) -> list:
    text = open(os.path.join(NATIVE, header)).read()
    body = re.search(r"struct %s \{(.*?)\};" % name, text, re.S).group(1)
    return re.findall(r"(\w+)(?:\[\d+\])?;", body)


def layout_program(include: str, ours: bool) -> str:
    lines = [include, "#include <stdio.h>", "#include <stddef.h>", "int main(void) {"]
    for header, names in GRAPH_STRUCTS.items():
        for s in names:
            lines.append(f'printf("{s} %zu\\n", sizeof(struct {s}));')
            for f in fields(header, s):
                lines.append(f'printf("{s}.{f} %zu\\n", offsetof(struct {s}, {f}));')
    value = "attr_value" if ours else "cudaStreamAttrValue"
    lines.append(f'printf("attr %zu %zu\\n", sizeof({value}), _Alignof({value}));')
    lines.append("return 0; }")
    return "\n".join(lines)


def test_graph_type_layouts_match_cuda_headers(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    real = run_c(tmp_path, "real", layout_program("#include <cuda_runtime_api.h>", False), [inc])
    ours = run_c(tmp_path, "ours", layout_program('#include "graph.h"\n#include "stream_attr.h"\n'
                                                   '#include "graph_cond.h"',
                                                   True), [NATIVE])
    assert ours == real


def test_graph_enum_values_match_cuda_headers(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    values = {}
    for header in GRAPH_STRUCTS:
        text = open(os.path.join(NATIVE, header)).read()
        values.update({n: int(v) for n, v in re.findall(r"\b(cuda\w+) = (\d+)", text)})
    assert len(values) > 30
    prog = ["#include <cuda_runtime_api.h>", "#include <stdio.h>", "int main(void) {"]
    prog += [f'printf("{n} %d\\n", (int){n});' for n in values]
    prog.append("return 0; }")
    out = run_c(tmp_path, "enums", "\n".join(prog), [inc])
    assert {n: int(v) for n, v in (line.split() for line in out.splitlines())} == values
