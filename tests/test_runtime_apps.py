"""``ptxc run`` on small CUDA applications built with nvcc at test time
(tests/cuda_apps/README.md; skipped without nvcc).

Checked: the applications' own result checks pass in full and hybrid mode
(also built with nvcc's default static runtime);
every per-launch counter and per-branch number is equal in both modes; one
launch's counters derived by hand; bad input (out-of-bounds store, an
unsupported API call, SASS without PTX) gives
a clear message and a non-zero status, never a hang.
"""
import os
import subprocess

import pytest

from ptxc.launcher.profile import DERIVED, TOTALS
from ptxc.runtime import shim
from runtime_apps import AppBuilder, run_ptxc

COUNTERS = TOTALS + DERIVED


@pytest.fixture(scope="session")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("cuda_apps"))


def launch_counters(run):
    return [{k: row[k] for k in ("kernel", "grid_x", "grid_y", "grid_z", "block_x", "block_y",
                                 "block_z", "shared_bytes", "stream") + COUNTERS}
            for row in run.rows("SELECT * FROM launches ORDER BY id")]


def branches(run):
    return run.rows("SELECT launch_id, function, block, line, warp_execs, active, taken, "
                    "not_taken, divergent FROM branches ORDER BY launch_id, function, block")


def both_modes(app, *args):
    runs = {m: run_ptxc(app, *args, mode=m) for m in ("full", "hybrid")}
    for m, r in runs.items():
        assert r.returncode == 0, (m, r.proc.stderr)
        assert "PASS" in r.proc.stdout, (m, r.proc.stdout)
    full, hybrid = runs["full"], runs["hybrid"]
    assert launch_counters(full) == launch_counters(hybrid)
    assert branches(full) == branches(hybrid)
    return full, hybrid


def test_counts_derived_by_hand(apps):
    """fill<<<3, 128>>>(p, 300): 12 warps. The PTX (checked below) has an
    entry block of 8 instructions ending in `@%p1 bra` (p1 = i >= n), a
    body of 4 (cvta, mul.wide, add, st) and `ret`. Warps 0-9 reach the body
    (threads 0..299; warp 9 with 12 of 32 lanes), warps 10-11 do not:
    inst_executed = 12*8 + 10*4 + 12*1 = 148; thread_inst_executed =
    384*8 + 300*4 + 384*1 = 4656; the guard of the bra is false for the 300
    threads with i < n: pred_on = 4656 - 300 = 4356; one bra per warp:
    branch = cond_branch = 12, divergent only in warp 9."""
    app = apps.build("counts")
    keep = os.path.join(os.path.dirname(app), "counts_ptx")
    for mode in ("full", "hybrid"):
        r = run_ptxc(app, mode=mode, options=("--keep-ptx", keep))
        assert r.returncode == 0 and "PASS" in r.proc.stdout, r.proc.stderr
        (row,) = r.summary["launches"]
        assert (row["grid_x"], row["block_x"]) == (3, 128)
        assert row["inst_executed"] == 148
        assert row["thread_inst_executed"] == 4656
        assert row["thread_inst_executed_pred_on"] == 4356
        assert (row["branch"], row["cond_branch"], row["divergent_branch"]) == (12, 12, 1)
    (ptx_file,) = os.listdir(keep)
    body = open(os.path.join(keep, ptx_file)).read().split(".entry _Z4fillPii", 1)[1]
    blocks = [b for b in body.split("$L__BB0_2:")]
    code = [ln.strip() for ln in blocks[0].splitlines() if ln.strip() and not ln.strip().startswith(
        (".", "(", ")", "{", "}", "//"))]
    assert len(code) == 12 and code[7].startswith("@%p1 bra") and code[11].startswith("st.global")
    assert blocks[1].split()[0] == "ret;"


def test_memory_counters_in_the_report(apps):
    """fill<<<3, 128>>>(p, 300) with --memory-counters. The only measured
    access is `st.global.u32 [p + 4*i]`, executed by warps 0-9 (see above)
    with consecutive i: warps 0-8 store 32 * 4 = 128 bytes from a
    128-byte-aligned offset (4 sectors, 1 line each; cudaMalloc memory is
    aligned), warp 9 stores lanes i = 288..299, 48 bytes at offset 1152 =
    9 * 128: sectors 36 and 37 (2 sectors, 1 line). So gst_requests = 10,
    gst_transactions = 9*4 + 2 = 38, gst_lines = 10, requested bytes = 1200,
    gst_efficiency = 1200 / (38 * 32) = 98.684...%; no loads, no shared
    accesses. Full and hybrid agree; the kernels table equals the launch."""
    app = apps.build("counts")
    rows = {}
    for mode in ("full", "hybrid"):
        r = run_ptxc(app, mode=mode, options=("--memory-counters",))
        assert r.returncode == 0 and "PASS" in r.proc.stdout, r.proc.stderr
        (row,) = r.rows("SELECT * FROM launches")
        (kernel,) = r.rows("SELECT * FROM kernels")
        assert (row["gst_requests"], row["gst_transactions"], row["gst_lines"]) == (10, 38, 10)
        assert row["gst_requested_bytes"] == 1200 and row["gld_requests"] == 0
        assert row["gst_efficiency"] == pytest.approx(100 * 1200 / (38 * 32), abs=1e-4)
        assert row["shared_load_requests"] == row["shared_store_requests"] == 0
        for name in ("gst_requests", "gst_transactions", "gst_efficiency"):
            assert kernel[name] == row[name]
        (instr,) = r.rows("SELECT * FROM memory_instructions")
        assert (instr["opcode"], instr["space"], instr["transactions"]) == ("st.global.u32",
                                                                             "global", 38)
        rows[mode] = row
    drop = ("mode", "wall_s", "compile_s", "run_s", "slice_fraction")
    assert {k: v for k, v in rows["full"].items() if k not in drop} == \
        {k: v for k, v in rows["hybrid"].items() if k not in drop}


def test_api_tour(apps):
    full, hybrid = both_modes(apps.build("api_tour"))
    kernels = [row["kernel"] for row in full.summary["kernels"]]
    assert kernels == ["_Z7scale2dPfmiif", "_Z11sum_managedPKii"]


def test_reduce_outputs_and_counters_equal(apps):
    full, hybrid = both_modes(apps.build("reduce"), "3000")
    assert full.proc.stdout == hybrid.proc.stdout
    assert hybrid.summary["launches"][0]["shared_bytes"] == 256 * 4


def test_two_fat_binaries(apps):
    full, _ = both_modes(apps.build("multi", ["multi_main.cu", "multi_lib.cu"]))
    assert [r["module"] for r in full.summary["launches"]] == ["fatbin1", "fatbin2", "fatbin1"]


def test_report_tables(apps):
    r = run_ptxc(apps.build("api_tour"), mode="full")
    launches = r.rows("SELECT * FROM launches")
    kernels = r.rows("SELECT * FROM kernels")
    assert len(launches) == 2 and sum(k["launches"] for k in kernels) == 2
    for k in kernels:
        mine = [row for row in launches if row["kernel"] == k["kernel"]]
        for name in TOTALS:
            assert k[name] == sum(row[name] for row in mine)
        assert k["wall_s"] > 0
    meta = {row["key"]: row["value"] for row in r.rows("SELECT * FROM meta")}
    assert meta["mode"] == "full" and meta["exit_status"] == "0"
    assert r.rows("SELECT COUNT(*) AS n FROM branches")[0]["n"] > 0


def test_out_of_bounds_names_the_allocation(apps):
    r = run_ptxc(apps.build("oob"))
    assert r.returncode == 1
    assert "before the launch" in r.proc.stdout and "after the launch" not in r.proc.stdout
    err = r.proc.stderr
    assert "kernel fill(int*, int), CTA (8,0,0), thread (0,0,0): out-of-bounds access" in err
    assert "right after the end of allocation #2 (cudaMalloc 4096 bytes at 0x" in err
    assert "st.global.u32" in err and "Traceback" not in err


def test_unsupported_call_keeps_earlier_output(apps, tmp_path):
    app = apps.build("unsupported")
    out = tmp_path / "stdout.txt"
    with open(out, "w") as f:
        r = run_ptxc(app, stdout=f)
    assert r.returncode == 86
    assert out.read_text() == "line before the unsupported call\n"
    assert "ptxc: unsupported CUDA runtime call: cudaDeviceEnablePeerAccess" in r.proc.stderr


def test_statically_linked_runtime(apps):
    """nvcc's default static runtime reaches ptxc through libcuda.so.1: the
    app runs, with the counts derived by hand in test_counts_derived_by_hand
    (tests/test_static_runtime.py compares whole apps with their shared builds)."""
    app = apps.build("counts_static", ["counts.cu"], flags=("-arch=sm_90",))
    r = run_ptxc(app)
    assert r.returncode == 0 and "PASS" in r.proc.stdout, r.proc.stderr
    assert "linked in statically" not in r.proc.stderr and "does not support" not in r.proc.stderr
    (row,) = r.summary["launches"]
    assert (row["inst_executed"], row["thread_inst_executed"]) == (148, 4656)
    assert (row["branch"], row["cond_branch"], row["divergent_branch"]) == (12, 12, 1)


def test_sass_only_and_ptx_override(apps, tmp_path):
    app = apps.build("counts_sass", ["counts.cu"],
                     flags=("-cudart", "shared", "-gencode", "arch=compute_90,code=sm_90"))
    r = run_ptxc(app)
    assert r.returncode == 1
    assert "no PTX (only SASS for sm_90)" in r.proc.stderr and "--ptx" in r.proc.stderr
    ptx = tmp_path / "counts.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", os.path.join(os.path.dirname(__file__),
                    "cuda_apps", "counts.cu"), "-o", str(ptx)], check=True, timeout=120)
    r = run_ptxc(app, options=("--ptx", str(ptx)))
    assert r.returncode == 0 and "PASS" in r.proc.stdout, r.proc.stderr
    assert r.summary["launches"][0]["inst_executed"] == 148


def test_application_without_ptxc(apps, tmp_path):
    """The shim loaded without `ptxc run` says how to run and exits 88."""
    app = apps.build("counts")
    lib = shim.library_dir(str(tmp_path))
    env = dict(os.environ, LD_LIBRARY_PATH=lib)
    env.pop("PTXC_RUNTIME_FD", None)
    proc = subprocess.run([app], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 88
    assert "run the application with `ptxc run" in proc.stderr


def test_host_threads(apps):
    """Four threads call the runtime concurrently; launches interleave in any
    order, so the modes are compared as multisets of launches."""
    app = apps.build("threads")
    runs = [run_ptxc(app, mode=m) for m in ("full", "hybrid")]
    for r in runs:
        assert r.returncode == 0 and "PASS" in r.proc.stdout, r.proc.stderr
    rows = [sorted(tuple(sorted((k, v) for k, v in d.items() if k != "stream"))
                   for d in launch_counters(r)) for r in runs]     # streams: in creation order
    assert len(rows[0]) == 12 and rows[0] == rows[1]


def test_rpath_to_the_real_runtime(apps, tmp_path):
    """A DT_RPATH is searched before LD_LIBRARY_PATH: ptxc refuses an
    application whose rpath holds a libcudart.so.13 (here a stand-in file)
    and accepts the same rpath as a DT_RUNPATH."""
    (tmp_path / "libcudart.so.13").write_bytes(b"")
    rpath = ("-Xlinker", "--disable-new-dtags", "-Xlinker", f"-rpath={tmp_path}")
    app = apps.build("counts_rpath", ["counts.cu"], flags=("-cudart", "shared", "-arch=sm_90") + rpath)
    r = run_ptxc(app)
    assert r.returncode == 1 and f"DT_RPATH ({tmp_path})" in r.proc.stderr
    runpath = ("-Xlinker", "--enable-new-dtags", "-Xlinker", f"-rpath={tmp_path}")
    app = apps.build("counts_runpath", ["counts.cu"],
                     flags=("-cudart", "shared", "-arch=sm_90") + runpath)
    r = run_ptxc(app)
    assert r.returncode == 0 and "PASS" in r.proc.stdout, r.proc.stderr
