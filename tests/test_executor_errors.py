"""Bad input ends a launch with one clear PtxcError that names the kernel and,
at run time, the CTA, the thread, the PTX line and the address (METRICS.md
"Bad input"); never a crash, never a silently wrong number."""
from __future__ import annotations

import numpy as np
import pytest

import ptxc
from executor_harness import run_kernel

HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"

STORE = HDR + """
.visible .entry k(.param .u64 out, .param .u32 n, .param .u32 shift)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra END;
  ld.param.u32 %r3, [shift];
  add.s32 %r4, %r1, %r3;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
END:
  ret;
}
"""
STORE_LINE = STORE.splitlines().index("  st.global.u32 [%rd3], %r1;") + 1


def test_missing_argument_full_mode_lists_parameters():
    with pytest.raises(ptxc.PtxcError) as e:
        run_kernel(STORE, "k", 1, 32, [np.zeros(32, np.int32), 32], mode="full")
    msg = e.value.render()          # the headline, the parameter's PTX line, the table
    assert "kernel k" in msg and "missing argument for parameter 2 'shift'" in msg
    assert ".u64 out" in msg and ".u32 n" in msg and ".u32 shift" in msg


def test_hybrid_mode_may_omit_non_control_inputs():
    # the branch slice needs n (the branch) but neither the buffer nor the
    # shift: without fault checks they may be left out
    prof = run_kernel(STORE, "k", 1, 32, {"n": 20}, mode="hybrid", check_faults=False)
    full = run_kernel(STORE, "k", 1, 32, [np.zeros(32, np.int32), 20, 0], mode="full")
    assert prof.counters() == full.counters()
    with pytest.raises(ptxc.PtxcError, match="control input"):
        run_kernel(STORE, "k", 1, 32, {"out": np.zeros(32, np.int32)}, mode="hybrid",
                   check_faults=False)
    # checking the store it skips, the run needs the buffer and the shift
    # (its address) too, and the message names every control input
    with pytest.raises(ptxc.PtxcError) as e:
        run_kernel(STORE, "k", 1, 32, {"n": 20}, mode="hybrid")
    assert "missing argument for parameter 0 'out'" in str(e.value)
    assert "needs every control input: 0 'out', 1 'n', 2 'shift'" in str(e.value)


@pytest.mark.parametrize("bad,match", [("text", "expects a number"), (2.5, "expects an integer"),
                                       (np.array(["a"]), "unsupported array dtype"),
                                       (2 ** 40, "does not fit"),
                                       (np.zeros(3, np.int32), "expects 4 bytes")])
def test_ill_typed_arguments(bad, match):
    with pytest.raises(ptxc.PtxcError, match=match):
        run_kernel(STORE, "k", 1, 32, [np.zeros(32, np.int32), bad, 0], mode="full")


def test_out_of_bounds_store_names_cta_thread_line_address():
    out = np.zeros(32, np.int32)
    with pytest.raises(ptxc.PtxcError) as e:
        run_kernel(STORE, "k", 1, 32, [out, 32, 1], mode="full")
    msg = str(e.value)
    assert "kernel k, CTA (0,0,0), thread (31,0,0)" in msg
    assert "out-of-bounds access" in msg and f"line {STORE_LINE}" in msg
    assert "address 0x" in msg and "right after the end of buffer of parameter out (128 bytes at 0x600000000)" in msg
    assert e.value.loc.line == STORE_LINE


def test_null_pointer_access():
    with pytest.raises(ptxc.PtxcError, match="null or wild pointer"):
        run_kernel(STORE, "k", 2, 32, [0, 32, 0], mode="full")


MISALIGNED = HDR + """
.visible .entry k(.param .u64 buf)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [buf];
  ld.global.u32 %r1, [%rd1+2];
  ret;
}
"""


def test_misaligned_access():
    with pytest.raises(ptxc.PtxcError) as e:
        run_kernel(MISALIGNED, "k", 1, 1, [np.zeros(8, np.int32)], mode="full")
    line = MISALIGNED.splitlines().index("  ld.global.u32 %r1, [%rd1+2];") + 1
    assert f"misaligned access at line {line}" in str(e.value) and "thread (0,0,0)" in str(e.value)


SHARED_OOB = HDR + """
.shared .align 4 .b8 s[64];
.visible .entry k()
{
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r2, %r2, %r3;
  st.shared.u32 [%r2], %r1;
  ret;
}
"""


def test_shared_out_of_bounds():
    with pytest.raises(ptxc.PtxcError, match=r"thread \(16,0,0\): out-of-bounds access.*"
                                              r"offset 64 in .shared memory of 64 bytes"):
        run_kernel(SHARED_OOB, "k", 1, 32, [], mode="full")


SPIN = HDR + """
.visible .entry k(.param .u32 n)
{
  .reg .b32 %r<4>; .reg .pred %p<2>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
SPIN:
  add.s32 %r2, %r2, %r1;
  setp.ne.s32 %p1, %r2, -1;
  @%p1 bra SPIN;
  ret;
}
"""


def test_non_terminating_kernel_names_the_loop():
    for mode in ("hybrid", "full"):
        with pytest.raises(ptxc.PtxcError) as e:
            run_kernel(SPIN, "k", 1, 32, [2], mode=mode, max_steps=10_000)
        msg = str(e.value)
        assert "no termination within 10000 block executions" in msg
        line = SPIN.splitlines().index("  add.s32 %r2, %r2, %r1;") + 1
        assert "block SPIN" in msg and f"line {line}" in msg and "kernel k, CTA (0,0,0)" in msg


UNSUPPORTED = HDR + """
.visible .entry k(.param .u64 buf, .param .u32 n)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .pred %p<2>; .reg .f32 %f<5>;
  ld.param.u32 %r1, [n];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra END;
  ld.param.u64 %rd1, [buf];
  tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tex0, {%r1}];
END:
  ret;
}
"""


def test_unsupported_opcode_fails_only_when_executed():
    text = UNSUPPORTED.replace(".visible", ".global .texref tex0;\n.visible", 1)
    try:
        ptxc.parse(text)
    except ptxc.PtxcError:
        pytest.skip("parser does not accept .texref yet")
    prof = run_kernel(text, "k", 1, 32, [np.zeros(4, np.float32), 0], mode="full")
    assert prof.inst_executed > 0
    with pytest.raises(ptxc.PtxcError) as e:
        run_kernel(text, "k", 1, 32, [np.zeros(4, np.float32), 1], mode="full")
    assert "not supported yet: tex" in str(e.value) and "at line" in str(e.value)


def test_bad_launch_configuration():
    with pytest.raises(ptxc.PtxcError, match="at most 1024"):
        run_kernel(STORE, "k", 1, 2048, [np.zeros(1, np.int32), 0, 0], mode="full")
    with pytest.raises(ptxc.PtxcError, match="no kernel named 'nope'"):
        run_kernel(STORE, "nope", 1, 32, [], mode="full")
    with pytest.raises(ptxc.PtxcError, match="unknown mode"):
        run_kernel(STORE, "k", 1, 32, [], mode="fast")
