"""`ptxc run --by source` on an application without CUDA line information
(issue 26, item 7): refused before the application runs when its
executable's fat binaries show it (runtime/lineinfo.py); when they cannot
(the kernels are in a shared library), the summary is still written and a
warning says why the per-line view is missing. docs/report.md.

The first tests need no nvcc: the fat binaries of tests/runtime_data and
the PTX files of tests/cuda. The application tests build with nvcc at test
time and are skipped without it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptxc.errors import PtxcError
from ptxc.runtime import fatbin, lineinfo

from runtime_apps import TIMEOUT, AppBuilder

HERE = Path(__file__).parent
DATA = HERE / "runtime_data"
APP = """\
#include <cstdio>
__global__ void twice(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2;
}
int main() {
  int *p;
  cudaMalloc(&p, 256 * sizeof(int));
  cudaMemset(p, 0, 256 * sizeof(int));
  twice<<<2, 128>>>(p, 256);
  cudaDeviceSynchronize();
  printf("ran\\n");
  return 0;
}
"""
REFUSED = ("ptxc: error: --by source needs CUDA line information, and the PTX in {app} has none "
           "(no .loc): rebuild with nvcc -lineinfo (or -G), or run without --by source")
WARNING = ("ptxc: warning: no per-source-line view: the PTX of the launched kernels has no .loc "
           "line information (build with nvcc -lineinfo or -G)")


def test_containers_of_a_section():
    # two containers, the second after zero padding to an 8-byte boundary,
    # and garbage after them
    one, two = (DATA / "plain.fatbin").read_bytes(), (DATA / "two_ptx.fatbin").read_bytes()
    pad = b"\0" * (-len(one) % 8 + 8)
    found = fatbin.containers(one + pad + two + b"\0" * 24)
    assert [len(c) for c in found] == [len(one), len(two)]
    assert [e.arch for e in fatbin.parse(found[1]) if e.kind == fatbin.KIND_PTX] == \
        [e.arch for e in fatbin.parse(two) if e.kind == fatbin.KIND_PTX]


def test_ptx_file_without_loc_is_refused():
    with pytest.raises(PtxcError) as e:
        lineinfo.refuse_without_lines("./app", 90, str(HERE / "cuda" / "divergence.sm90.ptx"))
    assert e.value.message.startswith("--by source needs CUDA line information, and ")
    lineinfo.refuse_without_lines("./app", 90, str(HERE / "cuda" / "divergence.sm75.lineinfo.ptx"))


def test_program_without_fat_binary_is_not_judged():
    lineinfo.refuse_without_lines(shutil.which("sh"), 90)        # no .nv_fatbin: no error


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    root = tmp_path_factory.mktemp("by_source")
    (root / "twice.cu").write_text(APP)
    return AppBuilder(root), root


def run(app, *options):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", "run", *options, "--", app],
                          capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=os.path.dirname(app))


def build(apps, name, *flags):
    builder, root = apps
    builder.build(name, [str(root / "twice.cu")], ("-cudart", "shared", "-arch=sm_90") + flags)
    return str(root / name)


def test_refused_before_the_run(apps):
    app = build(apps, "plain")
    r = run(app, "--by", "source")
    assert r.returncode == 1
    assert r.stdout == ""                                  # the application never ran
    assert r.stderr.splitlines() == [REFUSED.format(app=app)]


def test_with_lineinfo_it_runs(apps):
    app = build(apps, "lines", "-lineinfo")
    r = run(app, "--by", "source")
    assert r.returncode == 0 and r.stdout == "ran\n", r.stderr
    assert "if (i < n) p[i] *= 2;" in r.stderr


def test_kernels_in_a_shared_library_keep_the_summary(apps):
    # the executable embeds no PTX: nothing to check before the run; the
    # summary is written and the warning says why the view is missing
    builder, root = apps
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    lib, main = root / "libtwice.so", root / "main_only"
    (root / "lib.cu").write_text(APP.replace("int main()", "extern \"C\" int lib_main()"))
    (root / "main.cpp").write_text('extern "C" int lib_main();\nint main() { return lib_main(); }\n')
    for cmd in (["nvcc", "-cudart", "shared", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC",
                 str(root / "lib.cu"), "-o", str(lib)],
                ["nvcc", "-cudart", "shared", str(root / "main.cpp"), str(lib),
                 f"-Xlinker=-rpath={root}", "-o", str(main)]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
    r = run(str(main), "--by", "source", "-o", str(root / "summary.txt"))
    assert r.returncode == 0 and r.stdout == "ran\n", r.stderr
    assert WARNING in r.stderr.splitlines()
    summary = (root / "summary.txt").read_text()
    assert "ptxc profiling result" in summary and "twice(int*, int)" in summary
