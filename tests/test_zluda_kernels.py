"""Full-mode outputs of ZLUDA's test kernels (shared corpus,
zluda/test_spirv_run/*.ptx) against hand-derived numpy references
(tests/zluda_refs.py), launched like ZLUDA does: one CTA, an input and an
output pointer. Each launch is repeated in hybrid mode, whose counters must
equal the full run's.

A kernel the executor cannot run yet ("not supported" from ptxc) is an xfail
with ptxc's message; a known executor bug is a strict xfail naming it."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc import PtxcError
from zluda_refs import CASES, TRAPS

ZLUDA = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "zluda" / "test_spirv_run"
if not ZLUDA.is_dir():
    pytest.skip(f"shared PTX corpus not found at {ZLUDA} (it ships beside the repo, not in it)",
                allow_module_level=True)

# Profile.to_dict() entries that legitimately differ between a hybrid and a full run
NOT_COUNTERS = {"mode", "slice_fraction", "timings", "ctas_run", "cta_equivalence"}

_MODULES: dict = {}


def module(stem: str):
    if stem not in _MODULES:
        _MODULES[stem] = ptxc.load(str(ZLUDA / f"{stem}.ptx"))
    return _MODULES[stem]


def params(case):
    marks = [pytest.mark.xfail(strict=True, reason=f"executor bug: {case.bug}")] if case.bug else []
    return pytest.param(case, id=case.name, marks=marks)


def launch(case, mod, inp, mode):
    """(output array viewed as case.out_dtype, profile)."""
    kernel = case.kernel or case.file
    out = np.full(case.n_out * np.dtype(case.out_dtype).itemsize, case.out_fill, np.uint8)
    fn = next(k for k in mod.kernels if k.name == kernel)
    if len(fn.params) == 1:
        args = [out]
    else:
        buf = np.zeros(64, np.uint8) if inp is None else np.array(inp, copy=True).view(np.uint8).reshape(-1)
        args = [buf, out]
    try:
        prof = ptxc.launch(mod, kernel, (1, 1, 1), (case.block, 1, 1), args, mode=mode,
                           shared_bytes=case.shared)
    except PtxcError as e:
        if "not supported" in str(e):
            pytest.xfail(f"{mode} mode: {str(e).splitlines()[0]}")
        raise
    return out.view(case.out_dtype), prof


def ordered(x: np.ndarray) -> np.ndarray:
    """Float bit patterns mapped to integers in the order of the values (±0 -> 0)."""
    n = x.dtype.itemsize
    i = x.view(f"i{n}").astype(np.int64)
    return np.where(i < 0, -(i & ((1 << (8 * n - 1)) - 1)), i)


def compare(case, got: np.ndarray, want: np.ndarray, what: str) -> None:
    if case.compare is not None:
        got, want = got[case.compare], want[case.compare]
    want = np.asarray(want).view(got.dtype) if np.asarray(want).dtype.itemsize == got.dtype.itemsize \
        else np.asarray(want, got.dtype)
    if got.dtype.kind != "f":
        if not np.array_equal(got, want):
            bad = np.nonzero(got != want)[0]
            pytest.fail(f"{what}: mismatch at {bad.tolist()[:8]}: got {got[bad][:8].tolist()}, "
                        f"expected {want[bad][:8].tolist()}")
        return
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    assert np.array_equal(nan_g, nan_w), f"{what}: NaN positions differ: got {got}, expected {want}"
    g, w = got[~nan_w], want[~nan_w]
    ubits = f"u{got.dtype.itemsize}"
    if case.ulps:
        dist = np.abs(ordered(g) - ordered(w))
        assert (dist <= case.ulps).all(), f"{what}: got {g}, expected {w} (ulps {dist.tolist()} > {case.ulps})"
    elif case.atol or case.rtol:
        np.testing.assert_allclose(g, w, rtol=case.rtol, atol=case.atol, err_msg=what)
    else:
        if not np.array_equal(g.view(ubits), w.view(ubits)):
            pytest.fail(f"{what}: got {g.tolist()} ({[hex(v) for v in g.view(ubits).tolist()]}), "
                        f"expected {w.tolist()} ({[hex(v) for v in w.view(ubits).tolist()]})")


def counters(prof) -> dict:
    return {k: v for k, v in prof.to_dict().items() if k not in NOT_COUNTERS}


@pytest.mark.parametrize("case", [params(c) for c in CASES])
def test_zluda_kernel(case):
    mod = module(case.file)
    for i, (inp, want) in enumerate(case.runs):
        what = f"{case.file}.ptx run {i} (input {None if inp is None else np.asarray(inp).tolist()})"
        got, full = launch(case, mod, inp, "full")
        compare(case, got, want, what)
        _, hybrid = launch(case, mod, inp, "hybrid")
        assert counters(hybrid) == counters(full), f"{what}: hybrid counters differ from full"


@pytest.mark.parametrize("stem", TRAPS)
def test_zluda_trap(stem):
    mod = module(stem)
    out = np.zeros(8, np.uint8)
    fn = mod.kernels[0]
    args = [np.zeros(8, np.uint8), out][-len(fn.params):] if fn.params else []
    with pytest.raises(PtxcError, match="trap"):
        ptxc.launch(mod, fn.name, (1, 1, 1), (1, 1, 1), args, mode="full")
