"""Linking PTX modules (runtime/ptx_link.py: what cuLinkComplete and ptxc's
nvJitLink do with several PTX inputs): externs resolved to definitions,
.file numbers kept apart, duplicate definitions refused; the result parses
and runs."""
import numpy as np
import pytest

import ptxc
from ptxc.errors import PtxcError
from ptxc.runtime import ptx_link

KERNEL = """
.version 8.0
.target sm_80
.address_size 64
.file 1 "kernel.py"
.extern .func (.param .b32 r) twice(.param .b32 x);
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<3>; .reg .b64 %rd<2>;
    .loc 1 7 0
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, 21;
    { .param .b32 a; .param .b32 r; st.param.b32 [a], %r1;
      call.uni (r), twice, (a); ld.param.b32 %r2, [r]; }
    st.global.u32 [%rd1], %r2;
    ret;
}
"""
HELPER = """
// a helper module
.version 8.5
.target sm_80
.address_size 64
.file 1 "helper.py"
.visible .func (.param .b32 r) twice(.param .b32 x)
{
    .reg .b32 %r<3>;
    .loc 1 3 0
    ld.param.b32 %r1, [x];
    add.s32 %r2, %r1, %r1;
    st.param.b32 [r], %r2;
    ret;
}
"""


def test_two_modules_link_and_run():
    text = ptx_link.link([("kernel.ptx", KERNEL), ("helper.ptx", HELPER)])
    assert ".version 8.5" in text and ".extern" not in text
    assert '.file 1 "kernel.py"' in text and '.file 2 "helper.py"' in text
    assert ".loc 2 3 0" in text
    out = np.zeros(1, dtype=np.uint32)
    ptxc.launch(ptxc.parse(text), "k", (1, 1, 1), (1, 1, 1), [out], mode="full")
    assert out[0] == 42


def test_one_module_is_unchanged():
    assert ptx_link.link([("k", KERNEL)]) == KERNEL


def test_two_visible_definitions_are_an_error():
    with pytest.raises(PtxcError, match="multiple definition of 'twice' in b, first defined in a"):
        ptx_link.link([("a", HELPER), ("b", HELPER)])
