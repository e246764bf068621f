"""The native shim (ptxc/runtime/native): its protocol numbers agree with
protocol.py, it exports every name of the real libcudart.so.13 under version
node libcudart.so.13, and its CUDA declarations have the layouts and values
of CUDA 13's headers (checked against the real headers when nvcc is here).
"""
import os
import re
import shutil
import subprocess

import pytest

from ptxc.gpus import devices as gpus
from ptxc.runtime import protocol, shim

NATIVE = shim.NATIVE


def header_defines() -> dict:
    text = open(os.path.join(NATIVE, "protocol.h")).read()
    return {m[0]: m[1] for m in re.findall(r"#define (\w+) (\(?-?\d+\)?|\"\w+\")", text)}


def test_protocol_numbers_match():
    defs = header_defines()
    checked = 0
    for name, value in defs.items():
        py_name = name[len("PTXC_"):] if name.startswith("PTXC_") else name
        if py_name in ("FD_ENV", "CHECK_ENV", "APP_ENV", "CLOCK_ENV"):
            assert getattr(protocol, py_name) == value.strip('"'), name
        elif name.startswith("GPU_") and name != "GPU_COUNT":
            assert protocol.GPU_FIELDS[int(value)] == name[4:], name
        elif name == "GPU_COUNT":
            assert len(protocol.GPU_FIELDS) == int(value)
        else:
            assert getattr(protocol, py_name) == int(value.strip("()")), name
        checked += 1
    assert checked >= 40


def test_gpu_info_bytes():
    m = gpus.model("h100")
    raw = protocol.gpu_info_bytes(m)
    assert len(raw) == 8 * len(protocol.GPU_FIELDS) + len(m.name) + 1
    assert gpus.model("A100").sm == 80 and gpus.model("t4").sm == 75 and gpus.model("sm_70").key == "v100"


def exported_in_sources() -> set:
    names = set()
    for f in os.listdir(NATIVE):
        if f.endswith(".c"):
            text = open(os.path.join(NATIVE, f)).read()
            names.update(re.findall(r"^EXPORT [^(]*?\b(\w+)\(", text, re.M))
            names.update(re.findall(r"^ALIAS\((\w+),", text, re.M))
    return names


def test_exports_list():
    names = shim.build_module().export_names()
    assert len(names) == len(set(names)) > 400
    assert {"cudaMalloc", "__cudaRegisterFatBinary", "__cudaLaunchKernel", "cudaGraphCreate"} <= set(names)
    implemented = exported_in_sources()
    assert len(implemented) > 100
    cuda12 = set(shim.build_module().CUDA12_ONLY)     # exported by the libcudart.so.12 build only
    # the driver API (libcuda.so.1) and ptxc's nvJitLink live in the same library
    other = set(shim.build_module().driver_names()) | set(shim.build_module().JITLINK_NAMES) \
        | set(shim.build_module().NVRTC_NAMES)
    assert implemented <= set(names) | cuda12 | other, implemented - set(names) - cuda12 - other


def dynamic_symbols(path: str) -> dict:
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True, capture_output=True,
                         text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            name, _, version = parts[2].partition("@@")
            syms[name] = (parts[1], version)
    return syms


@pytest.fixture(scope="module")
def built_shim(tmp_path_factory):
    if not (shutil.which(os.environ.get("CC", "cc")) and shutil.which("nm")):
        pytest.skip("needs a C compiler and nm")
    out = tmp_path_factory.mktemp("shim") / "libptxc_cudart.so"
    return shim.build_module().compile_shared(str(out))


def test_shim_exports_every_name_with_version(built_shim):
    syms = dynamic_symbols(built_shim)
    names = shim.build_module().export_names()
    for n in names:
        assert n in syms, n
        assert syms[n][1] == "libcudart.so.13", n
    mod = shim.build_module()
    driver = set(mod.driver_names())                            # libcuda.so.1: same library
    jitlink = set(mod.JITLINK_NAMES)                            # ptxc's nvJitLink: same library
    nvrtc = set(mod.NVRTC_NAMES)                                # ptxc's NVRTC: same library
    assert all(syms[n][1] == "libcuda.so.1" for n in driver)
    assert all(syms[n][1] == "libnvJitLink.so.13" for n in jitlink)
    assert all(syms[n][1] == "libnvrtc.so.13" for n in nvrtc)
    assert set(syms) - set(names) - driver - jitlink - nvrtc == {
        "libcudart.so.13", "libcuda.so.1", "libnvJitLink.so.13", "libnvrtc.so.13"}   # the nodes
    strong = {n for n, (kind, _) in syms.items() if kind == "T"}
    cuda12 = set(shim.build_module().CUDA12_ONLY)
    assert exported_in_sources() - cuda12 <= strong             # implemented beat the stubs
    assert not cuda12 & set(syms)                               # CUDA 12 names: not in 13
    assert syms["cudaDeviceEnablePeerAccess"][0] == "W"         # a stub
    readelf = shutil.which("readelf")
    if readelf:
        dyn = subprocess.run([readelf, "-d", built_shim], capture_output=True, text=True).stdout
        assert "Library soname: [libcudart.so.13]" in dyn


def test_cuda12_shim_exports(tmp_path):
    """The libcudart.so.12 build: the same names (plus CUDA12_ONLY) in
    version node libcudart.so.12, soname libcudart.so.12; device12.c's
    functions are real definitions, the other CUDA 12 names stubs."""
    if not (shutil.which(os.environ.get("CC", "cc")) and shutil.which("nm")):
        pytest.skip("needs a C compiler and nm")
    mod = shim.build_module()
    lib = mod.compile_shared(str(tmp_path / "libptxc_cudart12.so"), major=12)
    syms = dynamic_symbols(lib)
    names = set(mod.export_names()) | set(mod.CUDA12_ONLY)
    other = set(mod.driver_names()) | set(mod.JITLINK_NAMES) | set(mod.NVRTC_NAMES)
    assert set(syms) - names - other == {"libcudart.so.12", "libcuda.so.1", "libnvJitLink.so.13",
                                         "libnvrtc.so.13"}
    assert {v for n, (_, v) in syms.items() if n in names} == {"libcudart.so.12"}
    assert syms["cudaGetDeviceProperties_v2"][0] == "T" and syms["cudaThreadSynchronize"][0] == "T"
    assert syms["cudaThreadSetLimit"][0] == "W"
    readelf = shutil.which("readelf")
    if readelf:
        dyn = subprocess.run([readelf, "-d", lib], capture_output=True, text=True).stdout
        assert "Library soname: [libcudart.so.12]" in dyn


def test_installed_shim_matches_sources(built_shim):
    path = shim.library_path()
    assert os.path.isfile(path)
    assert set(dynamic_symbols(path)) == set(dynamic_symbols(built_shim))


# ------------------------------------------------ layouts against CUDA 13
def cuda_include():
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return None
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda",
             os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))]
    for home in filter(None, homes):
        inc = os.path.join(home, "include")
        if os.path.isfile(os.path.join(inc, "driver_types.h")):
            return inc
    return None


STRUCTS = ("cudaDeviceProp", "cudaFuncAttributes", "cudaPointerAttributes", "cudaPitchedPtr",
           "cudaExtent")


def shim_struct_fields(name: str) -> list[str]:
    text = open(os.path.join(NATIVE, "shim.h")).read()
    body = re.search(r"struct %s \{(.*?)\};" % name, text, re.S).group(1)
    return re.findall(r"(\w+)(?:\[\d+\])?;", body)


def shim_enum_values() -> dict:
    text = open(os.path.join(NATIVE, "shim.h")).read()
    return {n: int(v) for n, v in re.findall(r"\b(cuda\w+) = (\d+)", text)}


def layout_program(include: str) -> str:
    lines = [include, "#include <stdio.h>", "#include <stddef.h>", "int main(void) {"]
    for s in STRUCTS:
        lines.append(f'printf("{s} %zu\\n", sizeof(struct {s}));')
        for f in shim_struct_fields(s):
            lines.append(f'printf("{s}.{f} %zu\\n", offsetof(struct {s}, {f}));')
    lines.append("return 0; }")
    return "\n".join(lines)


def run_c(tmp_path, name, source, include_dirs):
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run([os.environ.get("CC", "cc"), "-o", str(exe), str(src)]
                   + [f"-I{d}" for d in include_dirs], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def test_struct_layouts_match_cuda_headers(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    real = run_c(tmp_path, "real", layout_program("#include <cuda_runtime_api.h>"), [inc])
    ours = run_c(tmp_path, "ours", layout_program('#include "shim.h"'), [NATIVE])
    assert ours == real


def test_enum_values_match_cuda_headers(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    values = shim_enum_values()
    assert len(values) > 60
    assert header_values(tmp_path, "cuda_runtime_api.h", values, inc) == values


def header_values(tmp_path, header: str, names, inc: str) -> dict[str, int]:
    """The value of each enum constant in ``names`` as CUDA's ``header``
    defines it (a C program compiled against it prints them)."""
    prog = [f"#include <{header}>", "#include <stdio.h>", "int main(void) {"]
    prog += [f'printf("{n} %d\\n", (int){n});' for n in names]
    prog.append("return 0; }")
    out = run_c(tmp_path, "enums", "\n".join(prog), [inc])
    return {n: int(v) for n, v in (line.split() for line in out.splitlines())}
