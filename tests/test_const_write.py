"""Writes to a ``.const`` variable through a generic (or global) pointer are
invalid writes, as on a GPU: they used to land silently (``table[0]``
became 7). A store or atomic finds its segment in the write half of the
segment table (backends/llvm/runtime.py, ``Launch._segments``), where the
.const variables (the ``cvta.const`` window and, under ``ptxc run``, their
allocation) have no bytes. Without memcheck the launch stops ("write to
read-only memory"; ``--on-error=cuda``: cudaErrorIllegalAddress); memcheck
reports each write and drops it. Reads through the same pointer work."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import ptxc
from ptxc.check.memcheck import sanitizer_text
from runtime_apps import TIMEOUT, AppBuilder, run_ptxc

# Thread t (4 threads): reads table[t] through the generic address of table,
# writes v there, reads it again, stores old + new to out[t].
POKE = """.version 8.0
.target sm_90
.address_size 64
.const .align 4 .b32 table[4] = {1, 2, 3, 4};
.visible .entry poke(.param .u64 out, .param .u32 v)
{
  .reg .b32 %r<5>; .reg .b64 %rd<8>;
  mov.u64 %rd1, table;
  cvta.const.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.u32 %r3, [%rd4];
  ld.param.u32 %r2, [v];
  st.u32 [%rd4], %r2;
  ld.u32 %r4, [%rd4];
  ld.param.u64 %rd5, [out];
  add.s64 %rd6, %rd5, %rd3;
  add.u32 %r4, %r4, %r3;
  st.global.u32 [%rd6], %r4;
  ret;
}
.visible .entry bump(.param .u64 out)
{
  .reg .b32 %r<3>; .reg .b64 %rd<3>;
  mov.u64 %rd1, table;
  cvta.const.u64 %rd2, %rd1;
  atom.add.u32 %r1, [%rd2+8], 1;
  ret;
}
"""


def test_a_store_to_a_const_variable_stops_the_launch():
    m = ptxc.parse(POKE, "poke.ptx")
    for mode in ("full", "hybrid"):
        with pytest.raises(ptxc.PtxcError) as e:
            ptxc.launch(m, "poke", 1, 4, [np.zeros(4, np.int32), 7], mode=mode)
        assert "thread (0,0,0): write to read-only memory (a .const variable) at line 15 (st.u32), " \
               "address 0x400000000 (the .const variables + 0)" in e.value.message
    with pytest.raises(ptxc.PtxcError, match=r"write to read-only memory .* \(atom.add.u32\)"):
        ptxc.launch(m, "bump", 1, 1, [np.zeros(1, np.int32)], mode="full")


def test_memcheck_reports_and_drops_each_write():
    # The 4 stores are dropped: each thread reads table[t] = t + 1 twice,
    # out = 2 (t + 1); 4 errors, the first by thread 0 at table + 0.
    m = ptxc.parse(POKE, "poke.ptx")
    out = np.zeros(4, np.int32)
    prof = ptxc.launch(m, "poke", 1, 4, [out, 7], mode="full", check="memcheck")
    assert list(out) == [2, 4, 6, 8]
    assert prof.mem_error_count == 4
    [e] = prof.mem_errors
    assert (e.kind, e.error, e.thread, e.line) == ("store", "read-only", (0, 0, 0), 15)
    assert e.where == "the .const variable table + 0"
    text = sanitizer_text(prof.mem_errors, prof.mem_error_count)
    assert "Invalid __global__ write of size 4 bytes" in text
    assert "Address 0x400000000 is read-only\n=========     in the .const variable table + 0" in text
    prof = ptxc.launch(m, "bump", 1, 1, [np.zeros(1, np.int32)], mode="full", check="memcheck")
    assert prof.mem_error_count == 1 and prof.mem_errors[0].where == "the .const variable table + 8"


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("const_apps"))


def test_writes_through_cuda_get_symbol_address(apps):
    """tests/cuda_apps/const_write.cu: peek reads table through
    cudaGetSymbolAddress's pointer (2 4 6 8); poke's store through it stops
    ptxc run (a bad access), is cudaErrorIllegalAddress with
    --on-error=cuda, and under ptxc check --on-error=continue 4 invalid
    writes that leave table at 1 2 3 4."""
    app = apps.build("const_write")
    r = run_ptxc(app, mode="full")
    assert r.returncode == 1 and r.proc.stdout == "peek 2 4 6 8\n"
    assert "write to read-only memory (a .const variable) at line" in r.proc.stderr
    r = run_ptxc(app, mode="full", options=("--on-error=cuda",))
    assert r.returncode == 0 and "poke: cudaErrorIllegalAddress" in r.proc.stdout
    c = subprocess.run([sys.executable, "-m", "ptxc.cli", "check", "--on-error=continue", "--",
                        app], capture_output=True, text=True, timeout=TIMEOUT,
                       cwd=os.path.dirname(app))
    assert c.returncode == 1
    assert c.stdout == "peek 2 4 6 8\npoke: cudaSuccess\ntable 1 2 3 4\n"
    assert "Address 0x600000000 is read-only" in c.stderr and "ERROR SUMMARY: 4 errors" in c.stderr
    # ptxc check's default aborts the launch as compute-sanitizer does: the
    # application's cudaDeviceSynchronize after poke gets cudaErrorLaunchFailure
    c = subprocess.run([sys.executable, "-m", "ptxc.cli", "check", "--", app], capture_output=True,
                       text=True, timeout=TIMEOUT, cwd=os.path.dirname(app))
    assert c.returncode == 1 and "poke: cudaErrorLaunchFailure" in c.stdout
    assert "ERROR SUMMARY: 4 errors" in c.stderr
