"""``ptxc run`` on applications built with relocatable device code
(``nvcc -rdc=true``; runtime/rdc.py, docs/runtime.md "Relocatable device
code"), built with nvcc at test time (skipped without it):

* rdc_cg (tests/cuda_apps/rdc_cg_*.cu), cuda-samples'
  conjugateGradientMultiBlockCG in three files: device functions and
  variables defined in one file and used in another, symbols set and read
  across files, a cooperative launch with grid syncs; its solution and
  iteration count against numpy's run of the same algorithm;
* an object compiled without PTX: one line naming it;
* the messages: a driver-API application with nvcc's static runtime runs
  (no "rebuild with -cudart shared"), and a refusal of a linked fat binary
  says why before its capped list of kernels (no nvcc needed).
"""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

from ptxc.errors import PtxcError
from ptxc.runtime.modules import Registry
from runtime_apps import APPS, AppBuilder, nvcc, run_ptxc

CG = ["rdc_cg_main.cu", "rdc_cg_math.cu", "rdc_cg_kernel.cu"]
RDC = ("-cudart", "shared", "-arch=sm_90", "-rdc=true")
DATA = os.path.join(os.path.dirname(__file__), "runtime_data")


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("rdc_apps"))


def cg_reference(n: int, tol: float = 1e-10, max_iter: int = 500):
    """rdc_cg's system (rdc_cg_main.cu: tridiagonal, -1 off the diagonal,
    4 + (i % 3) / 2 on it, x_true[i] = (37 i) % 11 - 5) and the kernel's
    conjugate gradient iterations in float64: (iterations, x, x_true)."""
    i = np.arange(n)
    a = np.diag(4.0 + (i % 3) * 0.5) - np.eye(n, k=1) - np.eye(n, k=-1)
    xtrue = ((i * 37) % 11 - 5).astype(np.float64)
    b = a @ xtrue
    x, r = np.zeros(n), b.copy()
    r1, r0, p, k = r @ r, 0.0, None, 1
    while r1 > tol * tol and k <= max_iter:
        p = r.copy() if k == 1 else r + (r1 / r0) * p
        ax = a @ p
        alpha = r1 / (p @ ax)
        x += alpha * p
        r -= alpha * ax
        r0, r1 = r1, r @ r
        k += 1
    return k - 1, x, xtrue


def test_conjugate_gradient_in_three_files(apps, tmp_path):
    app = apps.build("rdc_cg", CG, flags=RDC)
    iterations, x_np, xtrue = cg_reference(1000)
    counters = {}
    for mode in ("full", "hybrid"):
        out = tmp_path / f"x.{mode}.bin"
        r = run_ptxc(app, str(out), mode=mode)
        assert r.returncode == 0, (mode, r.proc.stdout, r.proc.stderr[-2000:])
        lines = r.proc.stdout.splitlines()
        assert "PASS" in lines
        # device printf of each file (both files' format strings are `$str` in their PTX)
        assert "init: 1000 rows, tolerance 1e-20" in lines
        assert f"cg: {iterations} iterations, r.r <= 1e-20" in lines
        # the count read back with cudaMemcpyFromSymbol from the kernel file's d_iterations
        assert f"8 blocks of 128 threads, {iterations} iterations" in r.proc.stdout
        x = np.fromfile(out, dtype=np.float64)
        np.testing.assert_allclose(x, x_np, rtol=0, atol=1e-9)
        np.testing.assert_allclose(x, xtrue, rtol=0, atol=1e-8)
        launches = r.summary["launches"]
        assert [row["kernel"] for row in launches] == [
            "_Z11initVectorsPKdPdS1_i", "_Z20gpuConjugateGradientPKiS0_PKdPdS3_S3_S3_i"]
        assert (launches[1]["grid_x"], launches[1]["block_x"]) == (8, 128)
        counters[mode] = [{k: v for k, v in row.items() if k in (
            "inst_executed", "thread_inst_executed", "branch", "divergent_branch")}
            for row in launches]
    assert counters["full"] == counters["hybrid"]


def test_by_source_check_reads_the_objects(apps):
    """--by source's check before the run finds the three objects' PTX
    (in __nv_relfatbin; the linked fat binary has none) and their lack of
    .loc lines."""
    from ptxc.runtime import lineinfo
    app = apps.build("rdc_cg", CG, flags=RDC)
    texts = lineinfo.embedded_ptx(app, 90)
    assert len(texts) == 3 and sum(t.count(b".visible .entry") for t in texts) == 2   # main: none
    with pytest.raises(PtxcError, match="needs CUDA line information"):
        lineinfo.refuse_without_lines(app, 90)


def test_object_without_ptx_is_named(apps, tmp_path):
    """rdc_cg_math.cu compiled for sm_90 SASS only, the others with PTX."""
    if nvcc() is None:
        pytest.skip("needs nvcc")
    objs = []
    for src in CG:
        arch = ["-gencode", "arch=compute_90,code=sm_90"] if src == "rdc_cg_math.cu" \
            else ["-arch=sm_90"]
        obj = tmp_path / (src[:-3] + ".o")
        subprocess.run([nvcc(), "-dc", *arch, os.path.join(APPS, src), "-o", str(obj)],
                       check=True, timeout=300, capture_output=True)
        objs.append(str(obj))
    app = tmp_path / "rdc_cg_sass"
    subprocess.run([nvcc(), "-cudart", "shared", "-arch=sm_90", *objs, "-o", str(app)],
                   check=True, timeout=300, capture_output=True)
    r = run_ptxc(str(app), str(tmp_path / "x.bin"))
    assert r.returncode == 1
    (line,) = [ln for ln in r.proc.stderr.splitlines() if "error" in ln]
    assert line.startswith("ptxc: error: rdc_cg_math.cu has no PTX (only SASS for sm_90), and "
                           "ptxc links and runs the PTX of relocatable device code"), line
    assert "Traceback" not in r.proc.stderr


DRIVER_APP = r"""
#include <cuda.h>
#include <cstdio>
static const char *ptx =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 p)\n{\n .reg .b64 %rd<3>;\n .reg .b32 %r<2>;\n"
    " ld.param.u64 %rd1, [p];\n cvta.to.global.u64 %rd2, %rd1;\n mov.u32 %r1, 7;\n"
    " st.global.u32 [%rd2], %r1;\n ret;\n}\n";
int main()
{
    CUdevice d; CUcontext c; CUmodule m; CUfunction f; CUdeviceptr p;
    int v = 0;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuCtxCreate(&c, NULL, 0, d) ||
        cuModuleLoadData(&m, ptx) || cuModuleGetFunction(&f, m, "k") || cuMemAlloc(&p, 4))
        return 1;
    void *args[] = {&p};
    if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, 0) || cuMemcpyDtoH(&v, p, 4))
        return 1;
    printf("%s: %d\n", v == 7 ? "PASS" : "FAIL", v);
    return 0;
}
"""
DRIVER_CALLS = ("cuInit", "cuDeviceGet", "cuCtxCreate_v4", "cuModuleLoadData",
                "cuModuleGetFunction", "cuMemAlloc_v2", "cuLaunchKernel", "cuMemcpyDtoH_v2")


def test_driver_api_application_with_static_runtime(tmp_path):
    """nvcc links its static runtime (and a .nv_fatbin) into a driver-API
    program too: it needs libcuda.so.1, which ptxc replaces, so it runs;
    no advice to rebuild with -cudart shared. (Linked against a stand-in
    libcuda.so.1: the CUDA toolkit ships no driver.)"""
    cc = shutil.which("cc") or shutil.which("gcc")
    if nvcc() is None or cc is None:
        pytest.skip("needs nvcc and a C compiler")
    (tmp_path / "stub.c").write_text("".join(f"int {f}(void) {{ return 0; }}\n"
                                             for f in DRIVER_CALLS))
    subprocess.run([cc, "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", str(tmp_path / "stub.c"),
                    "-o", str(tmp_path / "libcuda.so")], check=True, timeout=120)
    (tmp_path / "drv.cpp").write_text(DRIVER_APP)
    app = tmp_path / "drv"
    subprocess.run([nvcc(), str(tmp_path / "drv.cpp"), "-o", str(app), "-L", str(tmp_path),
                    "-lcuda"], check=True, timeout=300, capture_output=True)
    r = run_ptxc(str(app))
    assert r.returncode == 0, r.proc.stderr
    assert r.proc.stdout == "PASS: 7\n"
    assert "-cudart shared" not in r.proc.stderr and "made no call" not in r.proc.stderr


def test_linked_refusal_says_why_first():
    """A linked fat binary (SASS only) registered with no objects and 44
    kernels: the message says why within its first 200 characters and
    names three kernels."""
    with open(os.path.join(DATA, "sass_only.fatbin"), "rb") as f:
        blob = f.read()
    reg = Registry(devmem=None, sm=90)
    fid = reg.register_fatbin(blob, linked=True)
    for i in range(44):
        reg.register_function(fid, 0x1000 + i, f"__nv_static_52__cuda_device_runtime_cu_k{i}")
    with pytest.raises(PtxcError) as e:
        reg.load(reg.fatbin(fid))
    msg = e.value.message
    assert "\n" not in msg and len(msg) < 500
    assert "relocatable device code" in msg[:200]
    assert msg.count("__nv_static") == 3 and "and 41 more" in msg


def test_missing_kernel_lists_three():
    """A registered kernel the PTX lacks: the message lists 3 of the PTX's
    5 kernels."""
    import ptxc
    from ptxc.runtime.modules import LoadedModule
    text = ".version 8.0\n.target sm_90\n.address_size 64\n" + "".join(
        f".visible .entry k{i}()\n{{\n ret;\n}}\n" for i in range(5))
    with pytest.raises(PtxcError) as e:
        LoadedModule(ptxc.parse(text), "fatbin1").function("other")
    assert e.value.message == ("fatbin1: the application registered kernel 'other' but the PTX "
                               "has no such kernel (kernels: k0, k1, k2 and 2 more)")
