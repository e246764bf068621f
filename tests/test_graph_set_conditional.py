"""cudaGraphSetConditional from device code (tests/cuda/graph_set_conditional.cu,
``nvcc -ptx -arch=sm_90 -O3``): nvcc leaves it an ``.extern .func``, which
ptxc/runtime/driver_funcs_ptx.py defines when a module is loaded, as one
store of the value to the handle (a conditional handle is the device
address of its 32-bit value in ptxc: runtime/native/graph_cond.c).

Values are derived by hand or with numpy: count_odd's last CTA sets the
condition to the number of odd inputs; countdown sets it to 0 only when the
counter reaches 0 and leaves it alone otherwise.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
from ptxc.launcher.api import launch_segments
from ptxc.runtime.driver_funcs_ptx import FUNCTIONS, provide

PTX = Path(__file__).parent / "cuda" / "graph_set_conditional.sm90.ptx"
V, HANDLE, COUNTER = SEG_FIRST_BUFFER, SEG_FIRST_BUFFER + 1, SEG_FIRST_BUFFER + 2


def module():
    return ptxc.parse(provide(PTX.read_text()), str(PTX))


def test_provide_appends_one_definition_to_a_declaring_module():
    text = PTX.read_text()
    out = provide(text)
    assert out.startswith(text)                         # the application's lines keep their numbers
    assert out.count(".visible .func cudaGraphSetConditional") == 1
    assert provide(out) == out                          # defined now: nothing more
    plain = ".version 9.0\n.target sm_90\n.address_size 64\n"
    assert provide(plain) == plain                      # not declared: unchanged
    assert set(FUNCTIONS) == {"cudaGraphSetConditional"}


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_count_odd_sets_the_handle(mode):
    rng = np.random.default_rng(29)
    v = rng.integers(0, 1000, 200).astype(np.int32)
    handle = np.full(16, 0xAB, np.uint8)               # the value lives at offset 8
    params = struct.pack("<QIxxxxQ", V << 32, len(v), (HANDLE << 32) + 8)
    opts = {"criteria": "effects"} if mode == "hybrid" else None
    launch_segments(module(), "_Z9count_oddPKiiy", 3, 32, params,
                    {V: v.view(np.uint8), HANDLE: handle}, mode=mode, slice_options=opts)
    assert handle[8:12].view(np.uint32)[0] == int((v % 2 == 1).sum())
    assert (handle[:8] == 0xAB).all() and (handle[12:] == 0xAB).all()   # 4 bytes, no more


@pytest.mark.parametrize("start,left,value", [(1, 0, 0), (3, 2, 7)])
def test_countdown_clears_the_handle_at_zero(start, left, value):
    counter = np.array([start], np.int32)
    handle = np.array([7], np.uint32)
    params = struct.pack("<QQ", COUNTER << 32, HANDLE << 32)
    launch_segments(module(), "_Z9countdownPiy", 1, 1, params,
                    {COUNTER: counter.view(np.uint8), HANDLE: handle.view(np.uint8)}, mode="full")
    assert counter[0] == left and handle[0] == value
