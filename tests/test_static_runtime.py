"""Applications built with nvcc's default static CUDA runtime under `ptxc run`.

nvcc without ``-cudart shared`` links libcudart_static into the program; that
runtime dlopens libcuda.so.1, which under `ptxc run` is the shim's driver
layer (native/drv_*.c, the export tables of native/drv_export.c). Each app
below is built twice at test time (skipped without nvcc), once with the
static runtime and once with ``-cudart shared``, and run under
``--mode full`` and ``--mode hybrid``. The static build must

* pass its own CPU-reference check and print exactly the shared build's
  output (event timings included: both read the modelled clock);
* make the launches its host loop makes (tests/app_specs.py, derived from
  the source), with the shared build's per-launch counters and branch
  table, kernel names included; the output file of the *out* apps must match
  numpy (app_specs.check_*);
* name no unsupported driver call.

The export-table slot that CUDA 13's static runtime calls and ptxc does not
implement (CONTEXT_WRAPPER[3]) is refused without being named (drv_export.c);
a launch with too many threads gives the static runtime
cudaErrorInvalidConfiguration, as the shared runtime gives (vectorAdd prints
it). What the driver layer lacks (stream capture, graphs) is named.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import app_harness as H
from app_specs import BY_NAME

HERE = Path(__file__).parent
APPS = ("vectorAdd", "matrixMul", "symbols", "simpleStreams", "reduction", "pathfinder", "bfs")
# tests/cuda_apps: CUDA arrays, texture and surface objects, read modes and
# array copies (texture_modes.cu, checked against host-computed values); a tour of the
# runtime API (__managed__ and __device__ variables, 2-D copies, events...)
CUDA_APPS = ("simple_texture", "texture_modes", "api_tour", "cubemap_texture")
WRITES_OUT = {"cubemap_texture"}          # takes OUT.bin (numpy-checked in test_runtime_texture_layers)
MODES = ("full", "hybrid")
LINKS = {"static": ["-arch=sm_90", "-O3"], "shared": H.NVCC_FLAGS}


def source(name: str) -> Path:
    app = HERE / "apps" / name / f"{name}.cu"
    return app if app.exists() else HERE / "cuda_apps" / f"{name}.cu"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    H.require_apps()
    out = tmp_path_factory.mktemp("static_runtime")
    cache = {}

    def get(name: str, link: str) -> Path:
        if (name, link) not in cache:
            exe = out / f"{name}.{link}"
            proc = subprocess.run([H.find_nvcc(), *LINKS[link], str(source(name)), "-o", str(exe)],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
            cache[name, link] = exe
        return cache[name, link]
    return get


@pytest.fixture(scope="module")
def runs(built, tmp_path_factory):
    cache = {}

    def get(name: str, link: str, mode: str):
        if (name, link, mode) not in cache:
            work = tmp_path_factory.mktemp(f"{name}_{link}_{mode}")
            app = BY_NAME.get(name)
            out_file = work / "out.bin"
            args = app.args(out_file) if app else [str(out_file)] if name in WRITES_OUT else []
            r = H.run(built(name, link), args, mode, work / "report.sqlite", work)
            cache[name, link, mode] = (r, out_file)
        return cache[name, link, mode]
    return get


# the module column names how the code came: "fatbinN" registered with the
# shared runtime, "moduleN" loaded through the driver (cuLibraryLoadData)
NOT_COMPARED = {"id", "module"}


def launch_table(report: H.Report) -> list[dict]:
    return [{k: v for k, v in H.counters(row).items() if k not in NOT_COMPARED}
            for row in report.launches]


def branch_table(report: H.Report) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "module"} for row in report.branches]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", APPS)
def test_static_build_runs_as_the_shared_build(runs, name, mode):
    static, _ = runs(name, "static", mode)
    shared, _ = runs(name, "shared", mode)
    assert static.passed(), f"exit {static.returncode}\n{static.stdout}\n{static.stderr[-3000:]}"
    assert shared.passed(), f"exit {shared.returncode}\n{shared.stdout}\n{shared.stderr[-3000:]}"
    assert static.stdout == shared.stdout
    assert "does not support" not in static.stderr and "unsupported" not in static.stderr
    assert "linked in statically" not in static.stderr


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", APPS)
def test_static_build_counts_as_the_shared_build(runs, name, mode):
    static = H.read_report(runs(name, "static", mode)[0].report)
    shared = H.read_report(runs(name, "shared", mode)[0].report)
    app = BY_NAME[name]
    data = app.output(runs(name, "static", mode)[1]) if app.output else None
    want = app.plan(data)
    assert len(static.launches) == len(want) > 0
    for i, (row, launch) in enumerate(zip(static.launches, want)):
        assert launch.matches(row), f"launch {i}: {row['kernel']}, expected {launch}"
    assert launch_table(static) == launch_table(shared)
    assert branch_table(static) == branch_table(shared) and static.branches
    assert static.meta["launches"] == shared.meta["launches"]
    assert static.meta["exit_status"] == "0"


def test_static_vector_add_reports_the_bad_configuration(runs):
    """The launch with 2048 threads fails with cudaErrorInvalidConfiguration
    (9), as in the shared build, not cudaErrorInvalidValue."""
    r, _ = runs("vectorAdd", "static", "full")
    assert "invalid launch: invalid configuration argument (9)" in r.stdout.splitlines()


def test_static_graphs_name_the_driver_calls_ptxc_lacks(built, tmp_path):
    """Stream capture and graphs reach the driver as cuStreamBeginCapture /
    cuGraph*, which ptxc's driver layer does not implement: each is named,
    returns CUDA_ERROR_NOT_SUPPORTED to the runtime, and the app's own
    error check stops it."""
    r = H.run(built("graphs", "static"), [], "full", None, tmp_path)
    assert r.returncode != 0
    assert "unsupported CUDA driver call: cuStreamBeginCapture_v2" in r.stderr
    assert "ptxc: the application called CUDA driver functions ptxc does not support" in r.stderr
    assert "rebuild it with `nvcc -cudart shared ...`" in r.stderr
    assert "cudaErrorNotSupported" in r.stdout          # what the app's runtime returned
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", CUDA_APPS)
def test_static_cuda_app_runs_as_the_shared_build(runs, name, mode):
    """simple_texture: CUDA arrays (cuArray3DCreate, cuMemcpy2D/3D to and
    from arrays), texture and surface objects through the driver
    (native/drv_texture.c); texture_modes: the read modes of integer
    arrays and array copies at offsets; cubemap_texture: cubemap and layered
    cubemap arrays (its output file equals the shared build's, which
    test_runtime_texture_layers checks with numpy); api_tour: a __managed__ variable
    (cuLibraryGetManaged) among much else. The app's own checks against its
    CPU reference pass, and its launches count as in the shared build."""
    static, _ = runs(name, "static", mode)
    shared, _ = runs(name, "shared", mode)
    assert static.returncode == 0, static.stdout + static.stderr[-3000:]
    assert {"PASS", "PASSED", "done"} & set(static.stdout.split()), static.stdout
    assert static.stdout == shared.stdout
    if name in WRITES_OUT:
        assert runs(name, "static", mode)[1].read_bytes() == runs(name, "shared", mode)[1].read_bytes()
    assert "does not support" not in static.stderr
    s, d = H.read_report(static.report), H.read_report(shared.report)
    assert len(s.launches) == len(d.launches) > 0
    assert launch_table(s) == launch_table(d) and branch_table(s) == branch_table(d)
