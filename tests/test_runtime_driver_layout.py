"""The driver API's types in native/driver.h against CUDA 13's cuda.h: the
layout of every struct the driver half reads (copies, launch
configurations) and the value of every enum constant it uses (skipped
without nvcc and the CUDA headers)."""
from __future__ import annotations

import os
import re

import pytest

from test_runtime_native import NATIVE, cuda_include, header_values, run_c

FIELDS = {
    "CUDA_MEMCPY2D": ("srcXInBytes", "srcY", "srcMemoryType", "srcHost", "srcDevice", "srcArray",
                      "srcPitch", "dstXInBytes", "dstY", "dstMemoryType", "dstHost", "dstDevice",
                      "dstArray", "dstPitch", "WidthInBytes", "Height"),
    "CUDA_MEMCPY3D": ("srcXInBytes", "srcY", "srcZ", "srcLOD", "srcMemoryType", "srcHost",
                      "srcDevice", "srcArray", "reserved0", "srcPitch", "srcHeight", "dstXInBytes",
                      "dstY", "dstZ", "dstLOD", "dstMemoryType", "dstHost", "dstDevice",
                      "dstArray", "reserved1", "dstPitch", "dstHeight", "WidthInBytes", "Height",
                      "Depth"),
    "CUlaunchConfig": ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ",
                       "sharedMemBytes", "hStream", "attrs", "numAttrs"),
    "CUlaunchAttribute": ("id", "value"),
}


def layout_program(include: str) -> str:
    lines = [include, "#include <stdio.h>", "#include <stddef.h>", "int main(void) {"]
    for s, fields in FIELDS.items():
        lines.append(f'printf("{s} %zu\\n", sizeof({s}));')
        lines += [f'printf("{s}.{f} %zu\\n", offsetof({s}, {f}));' for f in fields]
    lines.append("return 0; }")
    return "\n".join(lines)


def driver_enum_values() -> dict:
    text = open(os.path.join(NATIVE, "driver.h")).read()
    return {n: int(v) for n, v in re.findall(r"\b((?:CUDA|CU)_[A-Z_0-9]+) = (\d+)", text)}


def test_driver_struct_layouts_match_cuda_h(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    real = run_c(tmp_path, "real", layout_program("#include <cuda.h>"), [inc])
    ours = run_c(tmp_path, "ours", layout_program('#include "driver.h"'), [NATIVE])
    assert ours == real


def test_driver_enum_values_match_cuda_h(tmp_path):
    inc = cuda_include()
    if inc is None:
        pytest.skip("needs nvcc and the CUDA headers")
    values = driver_enum_values()
    assert len(values) > 25
    assert header_values(tmp_path, "cuda.h", values, inc) == values


def test_generated_lists_are_current():
    """cuda_exports.txt and the proc table cover each other: every function
    cuGetProcAddress can hand out is exported."""
    exports = set(open(os.path.join(NATIVE, "cuda_exports.txt")).read().split())
    table = open(os.path.join(NATIVE, "cuda_proc_table.inc")).read()
    served = set(re.findall(r'"(\w+)"\},', table))
    assert len(exports) > 600 and served <= exports
    assert '{"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"}' in table
    assert '{"cuMemcpyHtoD", 7000, 1, "cuMemcpyHtoD_v2_ptds"}' in table


def test_the_committed_driver_table_is_current():
    from ptxc.runtime import driver_api_table
    path = os.path.join(os.path.dirname(NATIVE), "..", "..", "docs", "driver-api.md")
    assert open(path).read() == driver_api_table.render(), \
        "regenerate: python -m ptxc.runtime.driver_api_table > docs/driver-api.md"
