"""The launch API and the command-line plumbing (docs/launch.md): argument
syntax, parameter naming, default block from .reqntid, kernel choice, the
Profile's serialisation, per-CTA statistics."""
from __future__ import annotations

import json

import numpy as np
import pytest

import ptxc
from ptxc.launcher.api import launch_from_options
from ptxc.launcher.args import parse_value

HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"
SAXPY = HDR + """
.visible .entry saxpy(.param .u64 saxpy_param_0, .param .u64 saxpy_param_1,
                      .param .f32 saxpy_param_2, .param .u32 saxpy_param_3)
.reqntid 64, 1, 1
{
  .reg .b32 %r<6>; .reg .b64 %rd<8>; .reg .f32 %f<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.s32 %r3, %r2, 64, %r1;
  ld.param.u32 %r4, [saxpy_param_3];
  setp.ge.u32 %p1, %r3, %r4;
  @%p1 bra END;
  ld.param.u64 %rd1, [saxpy_param_0];
  ld.param.u64 %rd2, [saxpy_param_1];
  mul.wide.u32 %rd3, %r3, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  ld.global.f32 %f2, [%rd5];
  ld.param.f32 %f3, [saxpy_param_2];
  fma.rn.f32 %f2, %f3, %f1, %f2;
  st.global.f32 [%rd5], %f2;
END:
  ret;
}
.visible .entry other()
{
  ret;
}
"""


def test_generators_and_literals():
    assert parse_value(None, "42") == 42 and parse_value(None, "0x10") == 16
    assert parse_value(None, "-1.5") == -1.5
    np.testing.assert_array_equal(parse_value(None, "arange:i32:5"), np.arange(5))
    z = parse_value(None, "zeros:f64:2x3")
    assert z.shape == (2, 3) and z.dtype == np.float64
    f = parse_value(None, "full:u16:4:7")
    assert f.dtype == np.uint16 and (f == 7).all()
    r1, r2 = parse_value(None, "random:f32:8:3"), parse_value(None, "random:f32:8:3")
    np.testing.assert_array_equal(r1, r2)
    assert r1.dtype == np.float32 and (0 <= r1).all() and (r1 < 1).all()


def test_npy_file_argument(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.arange(3, dtype=np.int16))
    np.testing.assert_array_equal(parse_value(None, f"@{path}"), [0, 1, 2])


def test_launch_from_options_names_and_default_block():
    m = ptxc.parse(SAXPY, "saxpy.ptx")
    opts = {"kernel": "saxpy", "grid": (2,), "block": None, "shared": 0,
            "args": ["saxpy_param_0=arange:f32:128", "1=ones:f32:128", "param_2=2.0", "3=100"],
            "max_steps": None, "threads": None}
    full = launch_from_options(m, opts, "full")
    hybrid = launch_from_options(m, opts, "hybrid")
    assert full.block == (64, 1, 1) and full.grid == (2, 1, 1)
    assert hybrid.counters() == full.counters()
    assert full.flop_count_sp == 2 * 100


def test_kernel_must_be_chosen_when_several():
    m = ptxc.parse(SAXPY, "saxpy.ptx")
    with pytest.raises(ptxc.PtxcError, match="kernels: saxpy, other"):
        launch_from_options(m, {"kernel": None, "args": []}, "full")


def test_reqntid_mismatch_is_an_error():
    m = ptxc.parse(SAXPY, "saxpy.ptx")
    with pytest.raises(ptxc.PtxcError, match="reqntid"):
        ptxc.launch(m, "saxpy", 1, 32, [np.zeros(4, np.float32)] * 2 + [1.0, 4], mode="full")


def test_profile_serialisation_and_per_cta():
    m = ptxc.parse(SAXPY, "saxpy.ptx")
    x, y = np.arange(200, dtype=np.float32), np.ones(200, np.float32)
    prof = ptxc.launch(m, "saxpy", 4, None, [x, y, 3.0, 150], mode="full")
    np.testing.assert_array_equal(y[:150], 3 * x[:150] + 1)
    assert (y[150:] == 1).all()
    d = json.loads(prof.to_json())
    assert d["inst_executed"] == prof.inst_executed and d["kernel"] == "saxpy"
    assert d["per_cta"]["ctas"] == 4
    # CTAs 0-1 do everything (16 + 1 instructions per warp), CTA 2 half, CTA 3 nothing
    assert d["per_cta"]["inst_executed"]["max"] == 2 * 17
    assert d["per_cta"]["inst_executed"]["argmin"] == 3
    assert "branch_efficiency" in d and "warp_execution_efficiency" in d
    assert "inst_executed" in prof.summary()
