"""Linking the PTX of relocatable device code as nvlink does
(runtime/ptx_link.py with ``strict``, runtime/rdc.py), on PTX that nvcc
made with ``-rdc=true`` (tests/cuda/rdc_*.cu, commands in their heads):
externs resolved across files, local symbols kept apart, one copy of a
``.weak`` function, dynamic shared memory declared once, libcudadevrt's
functions supplied as referenced, and nvlink's errors in one line. No nvcc
needed (tests/test_runtime_rdc.py builds applications)."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import ptxc
from ptxc.errors import PtxcError
from ptxc.runtime import cudadevrt_ptx, ptx_link

CUDA = os.path.join(os.path.dirname(__file__), "cuda")


def ptx(name: str) -> tuple[str, str]:
    with open(os.path.join(CUDA, f"{name}.sm90.rdc.ptx")) as f:
        return f"{name}.cu", f.read()



def test_two_objects_link_and_run():
    """apply (rdc_main.cu) calls scale and counts in calls, both defined in
    rdc_lib.cu: p[i] = 3 * p[i] + i % 4 (offset<float>, a .weak function of
    both files, kept once), + 100 if rdc_lib's holder (= &calls) did not
    point at calls; both files' printf strings are `$str`."""
    text = ptx_link.link([ptx("rdc_main"), ptx("rdc_lib")], strict=True)
    assert ".extern .global .align 4 .u32 calls" not in text
    assert len(re.findall(r"^\.visible \.global .*\bcalls;", text, re.M)) == 1
    assert len(re.findall(r"^\.weak \.func .*_Z6offsetIfET_i\(", text, re.M)) == 1
    assert "$str[" in text and "$str_ptxc_2[" in text          # rdc_lib.cu's, renamed
    assert len(re.findall(r"^\.extern \.shared .*\bstage\[\];", text, re.M)) == 1
    module = ptxc.parse(text)
    assert sorted(k.name for k in module.kernels) == ["apply", "count"]
    n = 100
    p = np.arange(n, dtype=np.float32) * 0.5
    want = 3.0 * p + (np.arange(n) % 4)
    ptxc.launch(module, "apply", (4, 1, 1), (32, 1, 1), [p, n], mode="full", shared_bytes=32 * 4)
    np.testing.assert_array_equal(p, want.astype(np.float32))


def test_dynamic_shared_takes_the_largest_alignment():
    """rdc_main.cu's `stage` is float (.align 4), rdc_lib.cu's double (.align 8)."""
    text = ptx_link.link([ptx("rdc_main"), ptx("rdc_lib")], strict=True)
    (decl,) = re.findall(r"^\.extern \.shared .*\bstage\[\];", text, re.M)
    assert ".align 8" in decl


def test_undefined_reference_names_symbol_and_file():
    with pytest.raises(PtxcError) as e:
        ptx_link.link([ptx("rdc_undefined")], strict=True)
    assert e.value.message == ("linking PTX: undefined reference to '_Z10missing_fnf' "
                               "(missing_fn(float)) in rdc_undefined.cu (and 1 more: "
                               "'missing_var')")


def test_missing_definitions_of_another_file():
    """rdc_main.cu alone: scale, holder and calls are rdc_lib.cu's (vprintf
    is the executor's, not undefined)."""
    with pytest.raises(PtxcError) as e:
        ptx_link.link([ptx("rdc_main")], strict=True)
    assert e.value.message == ("linking PTX: undefined reference to '_Z5scalef' (scale(float)) "
                               "in rdc_main.cu (and 2 more: 'holder', 'calls')")


def test_multiple_definition_names_both_files():
    with pytest.raises(PtxcError) as e:
        ptx_link.link([ptx("rdc_main"), ptx("rdc_lib"), ptx("rdc_dup")], strict=True)
    assert e.value.message == ("linking PTX: multiple definition of 'calls' in rdc_dup.cu, first "
                               "defined in rdc_lib.cu (and 1 more: '_Z5scalef' (scale(float)))")
    assert "\n" not in e.value.message


def test_device_runtime_functions_supplied_as_referenced():
    """grid_sum calls cudaCGGetIntrinsicHandle and cudaCGSynchronize: both
    come from cudadevrt_ptx.PTX, nothing else of it; a cooperative launch
    of 3 CTAs sums 1 + 2 + 3 across the grid barrier."""
    library = [("libcudadevrt", cudadevrt_ptx.PTX)]
    text = ptx_link.link([ptx("rdc_devrt")], library=library, strict=True)
    for name in ("cudaCGGetIntrinsicHandle", "cudaCGSynchronize"):
        assert len(re.findall(r"^\.visible \.func .*\b" + name + r"\(", text, re.M)) == 1
    offered = set(re.findall(r"^\.visible \.func[^(]*(?:\([^)]*\))?\s*(\w+)\(",
                             cudadevrt_ptx.PTX, re.M))
    linked = set(re.findall(r"^\.visible \.func[^(]*(?:\([^)]*\))?\s*(\w+)\(", text, re.M))
    assert linked == {"cudaCGGetIntrinsicHandle", "cudaCGSynchronize"} <= offered
    partial, total = np.zeros(3, dtype=np.int32), np.zeros(1, dtype=np.int32)
    ptxc.launch(ptxc.parse(text), "grid_sum", (3, 1, 1), (32, 1, 1), [partial, total],
                mode="full", cooperative=True)
    assert total[0] == 6 and list(partial) == [1, 2, 3]


def test_device_runtime_function_not_provided():
    """A device-runtime function that cudadevrt_ptx.PTX lacks is named as one."""
    text = ptx("rdc_devrt")[1]
    library = [("libcudadevrt", cudadevrt_ptx.PTX.replace("cudaCGSynchronize", "otherName"))]
    with pytest.raises(PtxcError) as e:
        ptx_link.link([("rdc_devrt.cu", text)], library=library, strict=True)
    assert e.value.message == ("linking PTX: undefined reference to 'cudaCGSynchronize' in "
                               "rdc_devrt.cu (a function of the CUDA device runtime, "
                               "libcudadevrt, that ptxc does not provide)")


def test_extern_variable_before_its_definition_moves_up():
    """rdc_main.cu declares `calls` (.extern) before rdc_lib.cu defines it:
    the definition takes the declaration's place, so kernels that use it
    come after it (after the variables its initializer names: rdc_lib's
    `holder = &calls`); a function's definition keeps its place and the
    declaration becomes its prototype, with the definition's linkage."""
    text = ptx_link.link([ptx("rdc_main"), ptx("rdc_lib")], strict=True)
    calls = text.index(".visible .global .align 4 .u32 calls;")
    holder = text.index(".visible .global .align 8 .u64 holder = generic(calls);")
    assert calls < holder < text.index(".visible .entry apply(")
    proto = re.search(r"^\.visible \.func\s+\(\.param \.b32 func_retval0\) _Z5scalef\s*"
                      r"\([^{]*?\)\s*;", text, re.M)
    assert proto and proto.start() < text.index(".visible .func  (.param .b32 func_retval0) "
                                                "_Z5scalef(")


@pytest.mark.parametrize("names", [("rdc_main", "rdc_lib"), ("rdc_devrt",)])
def test_linked_ptx_assembles(tmp_path, names):
    """What the link writes is PTX that ptxas accepts (prototypes of the
    definitions' linkage, variables defined before use); skipped without
    ptxas."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("needs ptxas")
    text = ptx_link.link([ptx(n) for n in names],
                         library=[("libcudadevrt", cudadevrt_ptx.PTX)], strict=True)
    path = tmp_path / "linked.ptx"
    path.write_text(text)
    proc = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "linked.cubin")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
