"""A shared library whose kernels ship as SASS only (as cuBLAS, cuFFT,
cuRAND and cuDNN do) is named at the launch that needs one of them, with
the library's name, and the run stops: never a wrong result (needs nvcc)."""
import os
import subprocess
import sys

import pytest

from runtime_apps import nvcc

LIB = r"""
__global__ void sass_only(int *p) { p[threadIdx.x] = 1; }
extern "C" void launch_it(int *p) { sass_only<<<1, 32>>>(p); }
"""
APP = r"""
#include <cstdio>
#include <cuda_runtime.h>
extern "C" void launch_it(int *p);
int main() {
    int *p;
    cudaMalloc(&p, 128);
    launch_it(p);
    printf("status %d\n", (int)cudaDeviceSynchronize());
}
"""


def test_sass_only_library_is_named(tmp_path):
    if nvcc() is None:
        pytest.skip("needs nvcc")
    (tmp_path / "lib.cu").write_text(LIB)
    (tmp_path / "app.cu").write_text(APP)
    lib = tmp_path / "libsassonly.so"
    for cmd in ([nvcc(), "-cudart", "shared", "-gencode", "arch=compute_90,code=sm_90", "-shared",
                 "-Xcompiler", "-fPIC", str(tmp_path / "lib.cu"), "-o", str(lib)],
                [nvcc(), "-cudart", "shared", "-arch=sm_90", str(tmp_path / "app.cu"), str(lib),
                 "-Xlinker", f"-rpath={tmp_path}", "-o", str(tmp_path / "app")]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    run = subprocess.run([sys.executable, "-m", "ptxc.cli", "run", "--", str(tmp_path / "app")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    assert "libsassonly.so ships its kernels as SASS only" in run.stderr, run.stderr
    assert "status" not in run.stdout
