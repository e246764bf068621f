"""tex in generated code (backends/llvm/ops/texture_native.py, texture_ir.py)
against the Python path it replaces on the common cases (texture.run_form,
forced with ``texture_native.disabled()``): the same output bits, the same
counters, and the calls into Python counted (callbacks.calls()).

Kernels: tests/cuda/textures.cu (`nvcc -ptx -arch=sm_90 -O3 textures.cu -o
textures.sm90.ptx`). Hand-derived callback counts: the Python path calls
back once per warp-level tex with at least one executing lane; tex1d(n=40)
on 2 CTAs of 32 threads executes the tex in 2 warps (lanes 0-31 of CTA 0,
lanes 0-7 of CTA 1: a partial mask); the native path calls back only for a
warp with a lane it leaves to Python.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm.ops import texture_native

PTX = os.path.join(os.path.dirname(__file__), "cuda", "textures.sm90.ptx")
TEX_CB = "ptxc.backends.llvm.ops.texture._callback"


@pytest.fixture(scope="module")
def mod():
    return ptxc.load(PTX)


def both(mod, kernel, grid, block, make_args, out_index):
    """((output, counters, callbacks) native, (the same) Python path)."""
    res = []
    for native in (True, False):
        args = make_args()
        callbacks.reset_calls()
        if native:
            prof = ptxc.launch(mod, kernel, grid, block, args, mode="full")
        else:
            with texture_native.disabled():
                prof = ptxc.launch(mod, kernel, grid, block, args, mode="full")
        res.append((args[out_index].copy(), prof.counters(), callbacks.calls()[TEX_CB]))
    return res


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("mode", ("clamp", "border", "wrap", "mirror"))
@pytest.mark.parametrize("filt", ("point", "linear"))
@pytest.mark.parametrize("normalized", (False, True))
def test_tex1d_partial_warp_same_as_python(mod, mode, filt, normalized):
    T = np.array([3.0, -1.0, 4.0, 1.5, 9.0, 2.0, -6.0, 5.0], np.float32)
    tex = ptxc.texture(T, filter=filt, address=mode, normalized=normalized, border=(7.5, 0, 0, 0))
    x0, dx = (-0.4, 0.047) if normalized else (-3.3, 0.37)
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "tex1d", 2, 32, lambda: [tex, np.full(48, -9.0, np.float32), x0, dx, 40], 1)
    same_bits(o1, o2)
    assert c1 == c2
    assert (n1, n2) == (0, 2)
    assert (o1[40:] == -9.0).all()                     # inactive lanes wrote nothing


@pytest.mark.parametrize("mode", ("clamp", "border", "wrap", "mirror"))
@pytest.mark.parametrize("filt", ("point", "linear"))
def test_tex2d_same_as_python(mod, mode, filt):
    rng = np.random.default_rng(11)
    T = rng.uniform(-2, 2, (5, 7)).astype(np.float32)
    tex = ptxc.texture(T, filter=filt, address=mode, normalized=True, border=(0.25, 0, 0, 0))
    h = 9
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "tex2d", h, 32, lambda: [tex, np.zeros((h, 24), np.float32), -0.31, 0.071, -0.42, 0.23, 24], 1)
    same_bits(o1, o2)
    assert c1 == c2 and (n1, n2) == (0, h)


def test_tex3d_and_rgba8_normalized_same_as_python(mod):
    rng = np.random.default_rng(3)
    T3 = rng.uniform(0, 1, (3, 4, 5)).astype(np.float32)
    t3 = ptxc.texture(T3, filter="linear", address="clamp")
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "tex3d", 1, 32, lambda: [t3, np.zeros(16, np.float32), -0.2, 0.37, 1.3, 1.7, 16], 1)
    same_bits(o1, o2)                    # one CTA: every CTA of tex3d writes out[0..w)
    assert c1 == c2 and (n1, n2) == (0, 1)
    T4 = rng.integers(0, 256, (4, 6, 4)).astype(np.uint8)
    t4 = ptxc.texture(T4, filter="linear", address="border", channels=4, read="normalized")
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "tex2d_rgba", 4, 32, lambda: [t4, np.zeros((4, 12, 4), np.float32), -0.5, 0.6, 0.5, 1.0, 12], 1)
    same_bits(o1, o2)
    assert c1 == c2 and (n1, n2) == (0, 4)


def test_int16_normalized_and_fetch_same_as_python(mod):
    T = np.array([-32768, -32767, -1, 0, 1, 16384, 32767, 5], np.int16)
    tex = ptxc.texture(T, read="normalized")
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "tex1d_norm", 1, 32, lambda: [tex, np.zeros(32, np.float32), 0.5, 1.0], 1)
    same_bits(o1, o2)
    assert o1[0] == -1.0 and o1[6] == 1.0 and (n1, n2) == (0, 1)
    L = np.arange(50, dtype=np.int32) * 3 - 70
    lin = ptxc.texture(L, linear=True)
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "fetch", 2, 32, lambda: [lin, np.zeros(40, np.int32), 2, 2**32 - 5, 40], 1)
    same_bits(o1, o2)
    np.testing.assert_array_equal(o1, [L[k] if 0 <= k < 50 else 0 for k in range(-5, 75, 2)])
    assert c1 == c2 and (n1, n2) == (0, 2)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
def test_lanes_left_to_python_mixed_with_native_ones(mod):
    """x = i * 1.2e8 (unnormalized, clamp): lanes 0..17 have |floor(x)| <
    2^31 and run natively, lanes 18..31 (x >= 2.16e9) go to Python: one
    callback for the one warp; lane 0 of a NaN coordinate (0 * inf) too."""
    T = np.arange(8, dtype=np.float32) + 0.5
    tex = ptxc.texture(T, filter="point", address="clamp")
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "tex1d", 1, 32, lambda: [tex, np.zeros(32, np.float32), 0.0, 1.2e8, 32], 1)
    same_bits(o1, o2)
    assert (n1, n2) == (1, 1) and c1 == c2
    np.testing.assert_array_equal(o1, [0.5] + [7.5] * 31)
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "tex1d", 1, 32, lambda: [tex, np.zeros(32, np.float32), 0.0, float("inf"), 32], 1)
    same_bits(o1, o2)
    assert (n1, n2) == (1, 1) and c1 == c2


def test_destroyed_handle_is_still_an_error(mod):
    tex = ptxc.texture(np.ones(8, np.float32))
    from ptxc.backends.llvm.ops import texture_objects as T
    assert T.destroy(int(tex))
    with pytest.raises(ptxc.PtxcError, match=f"invalid texture object handle {int(tex)}"):
        ptxc.launch(mod, "tex1d", 1, 32, [tex, np.zeros(32, np.float32), 0.0, 1.0, 32], mode="full")


# ------------------------------------------------------------ surfaces
def both_surfaces(mod, kernel, grid, block, make):
    """Native and Python runs of a surface kernel: (arrays after, counters,
    callbacks) each; ``make()`` returns (args, arrays to compare)."""
    res = []
    for native in (True, False):
        args, arrays = make()
        callbacks.reset_calls()
        if native:
            prof = ptxc.launch(mod, kernel, grid, block, args, mode="full")
        else:
            with texture_native.disabled():
                prof = ptxc.launch(mod, kernel, grid, block, args, mode="full")
        res.append(([a.copy() for a in arrays], prof.counters(), callbacks.calls()[TEX_CB]))
    (a1, c1, n1), (a2, c2, n2) = res
    for x, y in zip(a1, a2):
        same_bits(x, y)
    assert c1 == c2
    return n1, n2


def test_surface_read_write_same_as_python(mod):
    """surf_rw: one suld and one sust per warp; 6 rows of 20 in 6 CTAs of
    32 threads (lanes 20..31 do not execute): 12 callbacks on the Python path."""
    def make():
        S = np.arange(6 * 20, dtype=np.int32).reshape(6, 20) - 50
        return [ptxc.surface(S), 20, 6], [S]
    assert both_surfaces(mod, "surf_rw", 6, 32, make) == (0, 12)


def test_surface_clamp_and_zero_same_as_python(mod):
    def make():
        S = np.arange(30, dtype=np.int32).reshape(3, 10) + 1
        cl, ze = np.zeros((3, 16), np.int32), np.zeros((3, 16), np.int32)
        return [ptxc.surface(S), cl, ze, 5], [cl, ze]
    assert both_surfaces(mod, "surf_modes", 3, 16, make) == (0, 6)
    def make_neg():
        S = np.arange(30, dtype=np.int32).reshape(3, 10) + 1
        cl, ze = np.zeros((3, 16), np.int32), np.zeros((3, 16), np.int32)
        return [ptxc.surface(S), cl, ze, -7], [cl, ze]
    assert both_surfaces(mod, "surf_modes", 3, 16, make_neg) == (0, 6)


def test_surface_vectors_same_as_python(mod):
    rng = np.random.default_rng(9)
    C0 = rng.integers(0, 256, (3, 10, 4)).astype(np.uint8)
    P0 = rng.integers(-3000, 3000, (3, 10, 2)).astype(np.int16)

    def make():
        C, P = C0.copy(), P0.copy()
        return [ptxc.surface(C, channels=4), ptxc.surface(P, channels=2), 10], [C, P]
    assert both_surfaces(mod, "surf_vec", 3, 32, make) == (0, 12)


def test_surface_trap_goes_to_python_and_stores_nothing(mod):
    """surf_trap: lanes 2, 3 write past the row (.trap): the whole warp goes
    to Python, which reports the first failing thread; nothing is stored."""
    S = np.zeros((2, 8), np.int32)
    surf = ptxc.surface(S)
    callbacks.reset_calls()
    with pytest.raises(ptxc.PtxcError, match=r"thread \(2,0,0\).*surface write out of range at \(32, 0\)"):
        ptxc.launch(mod, "surf_trap", 1, 4, [surf, 8], mode="full")
    assert callbacks.calls()[TEX_CB] == 1 and not S.any()


@pytest.mark.parametrize("mode", ("clamp", "border", "wrap", "mirror"))
@pytest.mark.parametrize("normalized", (False, True))
def test_tld4_same_as_python(mod, mode, normalized):
    """tex2Dgather (tld4.r): one warp, one callback on the Python path."""
    T = np.arange(20, dtype=np.float32).reshape(4, 5) * 2 - 7
    tex = ptxc.texture(T, filter="point", address=mode, normalized=normalized, border=(-3.5, 0, 0, 0))
    x0, dx, y = (-0.3, 0.05, 0.6) if normalized else (-1.7, 0.33, 2.2)
    (o1, c1, n1), (o2, c2, n2) = both(
        mod, "gather", 1, 32, lambda: [tex, np.zeros((32, 4), np.float32), x0, dx, y], 1)
    same_bits(o1, o2)
    assert c1 == c2 and (n1, n2) == (0, 1)


@pytest.mark.parametrize("filt", ("point", "linear"))
def test_layered_same_as_python(mod, filt):
    """tex.a1d and tex.a2d (tex1DLayered, tex2DLayered): 5 CTAs, layer =
    CTA (layers 3 and 4 clamp to the last of 3), 30 of 32 lanes; two
    instructions per warp on the Python path."""
    rng = np.random.default_rng(4)
    L1 = rng.uniform(-1, 1, (3, 9)).astype(np.float32)
    L2 = rng.uniform(-1, 1, (3, 4, 9)).astype(np.float32)
    t1 = ptxc.texture(L1, filter=filt, address="mirror", normalized=True, layered=True)
    t2 = ptxc.texture(L2, filter=filt, address="border", normalized=True, layered=True)

    def make():
        o1, o2 = np.zeros((5, 30), np.float32), np.zeros((5, 30), np.float32)
        return [t1, t2, o1, o2, -0.3, 0.061, 0.37, 30], [o1, o2]
    assert both_surfaces(mod, "tex_layered", 5, 32, make) == (0, 10)


def test_unknown_handles_with_an_empty_table_are_errors_not_crashes():
    """A fresh process has no texture or surface: the native table has no
    rows at all. A random handle must go to Python (an error), never read
    a row (regression: suld/sust read row 0 of the empty table)."""
    import subprocess
    import sys
    code = (
        "import numpy as np, ptxc\n"
        f"m = ptxc.load({PTX!r})\n"
        "for k, a in (('surf_rw', [12345, 20, 6]), ('tex1d', [777, np.zeros(32, np.float32), 0.0, 1.0, 32]),\n"
        "             ('gather', [99, np.zeros((32, 4), np.float32), 0.0, 1.0, 0.0])):\n"
        "    try:\n"
        "        ptxc.launch(m, k, 1, 32, a, mode='full')\n"
        "    except ptxc.PtxcError as e:\n"
        "        print(k, 'invalid' in str(e) and 'object handle' in str(e))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["surf_rw", "True", "tex1d", "True", "gather", "True"]
