"""The naming rule and the run-time messages on a whole application
(tests/cuda_apps/names_app.cu, built by nvcc at test time; skipped
without it): ``ptxc inject --kernel`` by any name of ptxc/ir/names.py, with
the launched kernels listed when the name fits none or two; a fault under
``ptxc run`` and ``ptxc check`` at the CUDA line (``-lineinfo``), with the
demangled kernel and the PTX line named as "line N ... of the PTX of
fatbin1 (write it with --keep-ptx)" (docs/runtime.md).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import app_harness as H

HERE = Path(__file__).parent
SRC = HERE / "cuda_apps" / "names_app.cu"
VADD = "vadd(float const*, float const*, float*, int)"
LAUNCHED = ("vadd(float const*, float const*, float*, int) [_Z4vaddPKfS0_Pfi], "
            "void scale<float>(float*, float, int) [_Z5scaleIfEvPT_S0_i], "
            "void scale<double>(double*, double, int) [_Z5scaleIdEvPT_S0_i]")
CUDA_LINE = 11                       # `if (i < n) c[i] = a[i] + b[i];`
FAULT = (r"kernel vadd\(float const\*, float const\*, float\*, int\), CTA \(2,0,0\), thread "
         r"\(0,0,0\): out-of-bounds access at line (\d+) \(ld\.global\.f32\)")
ADDRESS = (r", address 0x[0-9a-f]+ \(right after the end of allocation #\d \(cudaMalloc 1024 "
           r"bytes at 0x[0-9a-f]+\)\)")


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    H.require_apps()
    out = tmp_path_factory.mktemp("names-apps")
    built = {}
    for name, flags in (("lineinfo", ["-lineinfo"]), ("plain", [])):
        exe = out / f"names_app_{name}"
        proc = subprocess.run([H.find_nvcc(), *H.NVCC_FLAGS, *flags, str(SRC), "-o", str(exe)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        built[name] = exe
    return built


def ptxc(*argv, cwd=None):
    proc = subprocess.run([H.find_ptxc(), *map(str, argv)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def test_run_fault_names_the_cuda_line(apps):
    code, out, err = ptxc("run", "--", apps["lineinfo"], "oob")
    lines = err.splitlines()
    assert code == 1 and out == ""
    m = re.fullmatch(rf"{re.escape(str(SRC))}:{CUDA_LINE}:5: error: {FAULT} of the PTX of fatbin1 "
                     rf"\(write it with --keep-ptx\){ADDRESS}", lines[0])
    assert m, lines[0]
    assert lines[1:3] == ["    if (i < n) c[i] = a[i] + b[i];", "    ^"]
    assert any(x.endswith(f"the run stopped in kernel {VADD} (the error above); no earlier "
                          f"launches completed") for x in lines)


def test_run_fault_without_lineinfo(apps):
    code, out, err = ptxc("run", "--", apps["plain"], "oob")
    assert code == 1
    first = err.splitlines()[0]
    assert re.fullmatch(rf"ptxc: error: {FAULT} of the PTX of fatbin1 \(write it with "
                        rf"--keep-ptx\){ADDRESS}", first), first
    assert "compute_90.ptx" not in err


def test_run_fault_with_keep_ptx(apps, tmp_path):
    code, out, err = ptxc("run", "--keep-ptx", tmp_path, "--", apps["lineinfo"], "oob")
    lines = err.splitlines()
    kept = tmp_path / "fatbin1.compute_90.ptx"
    m = re.fullmatch(rf"{re.escape(str(kept))}:(\d+):1: error: {FAULT} from "
                     rf"{re.escape(str(SRC))}:{CUDA_LINE}{ADDRESS}", lines[0])
    assert code == 1 and m, lines[0]
    assert m.group(1) == m.group(2)
    assert lines[1].startswith("ld.global.f32") and lines[2] == "^"


def test_check_blocks_name_the_cuda_line(apps):
    code, out, err = ptxc("check", "--stop-on-error", "--", apps["lineinfo"], "oob")
    lines = err.splitlines()
    at = lines.index("========= ptxc stopped the application:")
    assert code == 1
    assert re.fullmatch(rf"=========     {re.escape(str(SRC))}:{CUDA_LINE}:5: error: {FAULT} of "
                        rf"the PTX of fatbin1 \(write it with --keep-ptx\){ADDRESS}",
                        lines[at + 1]), lines[at + 1]
    code, out, err = ptxc("check", "--", apps["lineinfo"], "oob")
    assert re.search(rf"=========     at {re.escape(VADD)} in {re.escape(str(SRC))}:{CUDA_LINE} "
                     rf"\(line \d+ of the PTX of fatbin1, ld\.global\.f32\)", err), err


def test_inject_kernel_names(apps, tmp_path):
    code, out, err = ptxc("inject", "--runs", 1, "--jobs", 1, "--kernel", "vad", "--",
                          apps["plain"], cwd=tmp_path)
    assert code == 1
    assert err.splitlines()[-1] == ("ptxc: error: the fault-free run made no kernel launch of "
                                    f"kernel 'vad' (it launched: {LAUNCHED})")
    code, out, err = ptxc("inject", "--runs", 1, "--jobs", 1, "--kernel", "scale", "--",
                          apps["plain"], cwd=tmp_path)
    assert code == 1
    assert err.splitlines()[-1] == (
        "ptxc: error: kernel name 'scale' is ambiguous: it names void scale<float>(float*, "
        "float, int) [_Z5scaleIfEvPT_S0_i], void scale<double>(double*, double, int) "
        "[_Z5scaleIdEvPT_S0_i] (give the signature or the PTX name)")
    for key in ("scale<double>", "_Z5scaleIdEvPT_S0_i", "void scale<double>(double*, double, int)"):
        code, out, err = ptxc("inject", "--runs", 2, "--jobs", 1, "--kernel", key, "--",
                              apps["plain"], cwd=tmp_path)
        assert code == 0, err
        assert "dynamic instructions in 1 launch of " in out
        rows = [x for x in out.splitlines() if x.startswith("scale")]
        assert [r.split()[0] for r in rows] == ["scale<double>(...)"]
