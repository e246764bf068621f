"""The driver's export tables (native/drv_export.c, drv_integrity.c).

* MD2, which the runtime's check of the driver is an HMAC over, against the
  test suite of RFC 1319 (appendix A.5), the C code compiled with a small
  harness;
* the tables through the built library's cuGetExportTable: the UUIDs served,
  the size in slot 0, CUDA_ERROR_INVALID_VALUE for a table ptxc lacks.
  (That the runtime accepts the check, and the slots CuPy calls, are tested
  end to end by tests/test_python_gpu_cupy.py.)
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import pytest

from ptxc.runtime import shim

NATIVE = os.path.join(os.path.dirname(shim.__file__), "native")

RFC1319 = {   # A.5 Test suite
    "": "8350e5a3e24c153df2275c9f80692773",
    "a": "32ec01ec4a6dac72c0ab96fb34c0b5d1",
    "abc": "da853b0d3f88d99b30283a69e6ded6bb",
    "message digest": "ab4f496bfb2a530b219ff33031fe06b0",
    "abcdefghijklmnopqrstuvwxyz": "4e8ddff3650292ab5a4108c3aa47940b",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789":
        "da33def2a42df13975352846c30338cd",
    "1234567890" * 8: "d5976f79d83d3a0dc9806c3c66f3efd8",
}

HARNESS = r'''
#include <stdio.h>
#include <string.h>
#include "drv_export.h"
const void *drv_export_table(int which) { (void)which; return 0; }
const void *drv_integrity_slot(void) { return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 0; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 0; return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, CUdevice d) { (void)a; (void)d; *v = 0; return 0; }
CUresult cuDeviceGetUuid_v2(unsigned char *u, CUdevice d) { (void)d; memset(u, 0, 16); return 0; }
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        unsigned char out[16];
        ptxc_md2(argv[i], strlen(argv[i]), out);
        for (int k = 0; k < 16; k++)
            printf("%02x", out[k]);
        printf("\n");
    }
    return 0;
}
'''


def test_md2_matches_rfc1319_test_suite(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("needs a C compiler")
    (tmp_path / "h.c").write_text(HARNESS)
    exe = str(tmp_path / "md2")
    subprocess.run([cc, "-O1", "-I", NATIVE, "-o", exe, str(tmp_path / "h.c"),
                    os.path.join(NATIVE, "drv_integrity.c"), "-lpthread"], check=True)
    out = subprocess.run([exe, *RFC1319], capture_output=True, text=True, check=True).stdout
    assert out.split() == list(RFC1319.values())


UUIDS = {   # table: (UUID, slots in slot 0's size, or None: no size slot)
    "CUDART_INTERFACE": ("6bd5fb6c5bf4e74a8987d93912fd9df9", 10),
    "TOOLS_HOOKS": ("a094798c2e742e7493f20800200c0a66", 7),
    "TOOLS_TLS": ("42d85a8123f6cb478298f6e78a3aecdc", 3),
    "CONTEXT_LOCAL_STORAGE": ("c693336e1121df11a8c368f355d89593", None),
    "CONTEXT_WRAPPER": ("263e88607cd2614392f6bbd5006dfa7e", 6),
    "INTEGRITY": ("d4082055bde6704b8d34ba123c66e1f2", 3),
}


def test_export_tables_served_by_uuid():
    lib = ctypes.CDLL(shim.library_path())
    get = lib.cuGetExportTable
    get.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
    for name, (uuid, slots) in UUIDS.items():
        table = ctypes.c_void_p()
        assert get(ctypes.byref(table), bytes.fromhex(uuid)) == 0, name
        assert table.value, name
        first = ctypes.cast(table, ctypes.POINTER(ctypes.c_size_t))[0]
        if slots is not None:
            assert first == slots * 8, name
        else:
            assert first > 4096, name          # a function pointer
    table = ctypes.c_void_p(1)
    # f8cff951-...: asked for by the runtime, not served (a driver without it)
    assert get(ctypes.byref(table), bytes.fromhex("f8cff95121468b4eb9e2fb469e7c0dd9")) == 1
    assert table.value is None
    assert get(None, bytes.fromhex(UUIDS["TOOLS_TLS"][0])) == 1
