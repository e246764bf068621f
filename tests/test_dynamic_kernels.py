"""Kernel-level tests of the executor on nvcc-compiled PTX (tests/cuda).

For every launch of tests/cuda/expected_counts.py: a hybrid and a full run
give identical counters (METRICS.md: the definition of a sound slice), the
counters and per-block numbers equal the hand-derived ones
(tests/cuda/EXPECTED.md), and the full run leaves the output buffers equal to
the numpy references. For the arithmetic kernels of
tests/cuda/reference_ops.py, the full run reproduces the exactly rounded
references (with the documented tolerance for ``.approx`` slots only).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import ptxc

HERE = os.path.join(os.path.dirname(__file__), "cuda")
sys.path.insert(0, HERE)
expected_counts = pytest.importorskip("expected_counts")
reference_ops = pytest.importorskip("reference_ops")

DTYPES = {"i32": np.int32, "u32": np.uint32, "f32": np.float32, "f64": np.float64,
          "i64": np.int64, "u64": np.uint64, "u8": np.uint8, "i8": np.int8}
_MODULES: dict = {}


def module(name):
    if name not in _MODULES:
        _MODULES[name] = ptxc.load(os.path.join(HERE, name))
    return _MODULES[name]


def make_args(specs):
    """Expected-counts argument specs -> (names, values)."""
    names, values = [], []
    for spec in specs:
        name, text = spec.split("=", 1)
        names.append(name)
        if text.startswith("formula:"):
            _, expr, dt, n = text.split(":")
            i = np.arange(int(n))
            values.append(np.asarray(eval(expr, {"np": np, "i": i}), dtype=DTYPES[dt]))
        elif text.startswith("zeros:"):
            _, dt, n = text.split(":")
            values.append(np.zeros(int(n), DTYPES[dt]))
        else:
            values.append(int(text, 0))
    return names, values


LAUNCHES = [(f, k, launch) for (f, k), launches in expected_counts.EXPECTED.items()
            for launch in launches]


def launch_id(item):
    f, k, launch = item
    return f"{launch['id']}-{f}-{k}"


def run_both(f, k, launch):
    m = module(f)
    profs, outs = {}, {}
    for mode in ("full", "hybrid"):
        names, values = make_args(launch["args"])
        profs[mode] = ptxc.launch(m, k, launch["grid"], launch["block"], values, mode=mode)
        outs[mode] = dict(zip(names, values))
    return profs, outs


@pytest.mark.parametrize("item", LAUNCHES, ids=[launch_id(x) for x in LAUNCHES])
def test_expected_counts(item):
    f, k, launch = item
    profs, outs = run_both(f, k, launch)
    full, hybrid = profs["full"], profs["hybrid"]
    assert hybrid.counters() == full.counters()
    for name, want in launch["counters"].items():
        assert getattr(full, name) == want, f"{launch['id']} {name}"
    got = {(e["function"], e["first"]): e for e in full.per_block.values()}
    for fn, first, n, we, te in launch.get("blocks", []):
        e = got[(fn, first)]
        assert (e["instructions"], e["warp_execs"], e["thread_execs"]) == (n, we, te), \
            f"{launch['id']} block {fn}#{first}"
    env = dict(outs["full"])
    for name, expr in launch.get("outputs", {}).items():
        arr = outs["full"][name]
        want = eval(expr, {"np": np, "i": np.arange(len(arr)), **env})
        np.testing.assert_array_equal(arr, np.asarray(want).astype(arr.dtype), err_msg=launch["id"])


ARITH = [(f, k) for k, files in reference_ops.PTX_FILES.items() for f in files]


@pytest.mark.parametrize("f,kernel", ARITH, ids=[f"{f}-{k}" for f, k in ARITH])
def test_arithmetic_kernels(f, kernel):
    case, order = reference_ops.KERNELS[kernel]
    inputs, outputs, (grid, block) = case()
    m = module(f)
    results = {}
    for mode in ("full", "hybrid"):
        arrays = {**{k: v.copy() for k, v in inputs.items()},
                  **{k: np.zeros_like(v) for k, v in outputs.items()}}
        prof = ptxc.launch(m, kernel, grid, block, [arrays[n] for n in order], mode=mode)
        results[mode] = (prof, arrays)
    assert results["hybrid"][0].counters() == results["full"][0].counters()
    arrays = results["full"][1]
    for name, want in outputs.items():
        got = arrays[name]
        tol = {(s, st): v for (kk, o, s, st), v in reference_ops.TOLERANCES.items()
               if kk == kernel and o == name}
        mask = np.ones(got.shape, bool)
        for (slot, stride), (rtol, atol) in tol.items():
            idx = np.arange(slot, got.size, stride)
            np.testing.assert_allclose(got[idx], want[idx], rtol=rtol, atol=atol,
                                       err_msg=f"{kernel} {name} slot {slot}")
            mask[idx] = False
        if got.dtype.kind == "f":
            np.testing.assert_array_equal(got[mask], want[mask].astype(got.dtype),
                                          err_msg=f"{kernel} {name}")
        else:
            np.testing.assert_array_equal(got[mask], want[mask].astype(got.dtype),
                                          err_msg=f"{kernel} {name}")
