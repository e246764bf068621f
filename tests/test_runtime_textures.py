"""CUDA arrays, texture and surface objects under ``ptxc run``
(native/texture.c, runtime/textures.py).

tests/cuda_apps/simple_texture.cu (built with nvcc at test time; skipped
without nvcc) rotates an image through a 2-D texture with linear filtering,
wrap addressing and normalized coordinates and compares every pixel with
its own CPU model of the programming guide's formulas (9-bit weights), then
round-trips a surface, reads linear memory with tex1Dfetch and pitched
memory as a 2-D texture past its edges (clamp): it prints
PASSED only if all agree, in full and in hybrid mode, with equal counters.
The shim's declarations of cudaChannelFormatDesc, cudaResourceDesc and
cudaTextureDesc are checked field by field against CUDA 13's headers.
"""
import os
import re

import pytest

from ptxc.runtime import protocol, shim
from runtime_apps import AppBuilder, run_ptxc
from test_runtime_apps import both_modes
from test_runtime_native import cuda_include, run_c

STRUCTS = ("cudaChannelFormatDesc", "cudaResourceDesc", "cudaTextureDesc")
HEADER = os.path.join(shim.NATIVE, "texture.h")


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("texture_apps"))


def test_simple_texture_full_and_hybrid(apps):
    full, hybrid = both_modes(apps.build("simple_texture"))
    for r in (full, hybrid):
        assert r.proc.stdout.splitlines() == [
            "rotate (linear, wrap, normalized): ok", "surface read/write: ok",
            "tex1Dfetch on linear memory: ok", "pitch2D (point, clamp): ok", "PASSED"]
    kernels = [row["kernel"] for row in full.summary["launches"]]
    assert len(kernels) == 4


def test_simple_texture_other_size(apps):
    """A size that is not a multiple of the 8 x 8 block (partial CTAs)."""
    both_modes(apps.build("simple_texture"), "37", "29")


def test_sparse_array_is_refused(apps):
    """An unsupported array kind (cudaArraySparse) stops the application
    with one line naming the call (exit status 86, docs/runtime.md); layered
    and cubemap arrays are supported (tests/test_runtime_texture_layers.py)."""
    r = run_ptxc(apps.build("simple_texture"), "sparse")
    assert r.returncode == 86
    assert "ptxc: unsupported CUDA runtime call: cudaMallocArray/cudaMalloc3DArray with " \
           "cudaArraySparse" in r.proc.stderr


def fields(name: str) -> list[str]:
    body = re.search(r"struct %s \{(.*?)\n\};" % name, open(HEADER).read(), re.S).group(1)
    top = re.sub(r"union \{.*\} res;", "res;", body, flags=re.S)
    return re.findall(r"(\w+)(?:\[\d+\])?;", top)


def layout_program(include: str) -> str:
    lines = [include, "#include <stdio.h>", "#include <stddef.h>", "int main(void) {"]
    for s in STRUCTS:
        lines.append(f'printf("{s} %zu\\n", sizeof(struct {s}));')
        for f in fields(s):
            lines.append(f'printf("{s}.{f} %zu\\n", offsetof(struct {s}, {f}));')
    for m in ("res.array.array", "res.linear.devPtr", "res.linear.desc", "res.linear.sizeInBytes",
              "res.pitch2D.width", "res.pitch2D.height", "res.pitch2D.pitchInBytes"):
        lines.append(f'printf("{m} %zu\\n", offsetof(struct cudaResourceDesc, {m}));')
    lines.append("return 0; }")
    return "\n".join(lines)


def test_layouts_match_cuda_headers(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    real = run_c(tmp_path, "real", layout_program("#include <cuda_runtime_api.h>"), [inc])
    ours = run_c(tmp_path, "ours", layout_program('#include "texture.h"'), [shim.NATIVE])
    assert ours == real
    assert "cudaTextureDesc.borderColor" in ours and "cudaResourceDesc.flags" in ours


def test_create_request_size_matches_the_shim():
    """runtime/textures.py unpacks what native/texture.c packs (CREATE_BYTES)."""
    from ptxc.runtime.textures import CREATE
    c = open(os.path.join(shim.NATIVE, "texture.c")).read()
    assert f"#define CREATE_BYTES {CREATE.size}" in c
    assert protocol.OP_TEXTURE_CREATE == 40 and protocol.OP_TEXTURE_DESTROY == 41
