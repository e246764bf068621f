"""Texture and surface objects on the executor (backends/llvm/ops/texture.py,
backends/llvm/ops/texture_objects.py) with kernels nvcc compiled from tests/cuda/textures.cu
(`nvcc -ptx -arch=sm_90 -O3 textures.cu -o textures.sm90.ptx`).

Expected values come from ``model_fetch`` below: a scalar model of the CUDA
C++ Programming Guide's appendix "Texture Fetching", written here
independently of backends/llvm/ops/texture_objects.py: point sampling T[floor(x)]; linear
filtering with xB = x - 0.5, i = floor(xB), weight = frac(xB) in 9-bit fixed
point (8 fractional bits, rounded to nearest, ties up); normalized
coordinates times the size; address modes on texel indices (wrap and
mirror only with normalized coordinates, otherwise clamp). A few values
are also derived by hand in the tests' docstrings. Launches that write
nothing the host reads compare hybrid and full counters.
"""
import math
import os

import numpy as np
import pytest

import ptxc

PTX = os.path.join(os.path.dirname(__file__), "cuda", "textures.sm90.ptx")


@pytest.fixture(scope="module")
def mod():
    return ptxc.load(PTX)


# ------------------------------------------------------------ the model
def f32(x):
    return float(np.float32(x))


def index(i, n, mode, normalized):
    """The texel index of integer index i, or None (border)."""
    if not normalized and mode in ("wrap", "mirror"):
        mode = "clamp"
    if mode == "clamp":
        return min(max(i, 0), n - 1)
    if mode == "border":
        return i if 0 <= i < n else None
    if mode == "wrap":
        return i % n
    m = i % (2 * n)                               # mirror
    return m if m < n else 2 * n - 1 - m


def model_fetch(T, coords, filt, mode, normalized):
    """tex(coords) of array T (shape (..., h, w)), coordinates (x, y, ...)."""
    sizes = list(reversed(T.shape))
    xs = [f32(f32(c) * f32(n)) if normalized else f32(c) for c, n in zip(coords, sizes)]

    def texel(idx):
        fixed = [index(i, n, mode, normalized) for i, n in zip(idx, sizes)]
        return 0.0 if None in fixed else float(T[tuple(reversed(fixed))])

    if filt == "point":
        return texel([math.floor(x) for x in xs])
    base, w = [], []
    for x in xs:
        xb = f32(x - 0.5)
        i = math.floor(xb)
        base.append(i)
        w.append(math.floor((xb - i) * 256 + 0.5) / 256)
    total = 0.0
    for corner in range(1 << len(xs)):
        bits = [(corner >> k) & 1 for k in range(len(xs))]
        weight = 1.0
        for a, b in zip(w, bits):
            weight *= a if b else 1 - a
        total += weight * texel([i + b for i, b in zip(base, bits)])
    return total


def hybrid_equals_full(mod, kernel, grid, block, args):
    full = ptxc.launch(mod, kernel, grid, block, args, mode="full")
    hybrid = ptxc.launch(mod, kernel, grid, block, args, mode="hybrid")
    assert hybrid.counters() == full.counters()
    return full


# ------------------------------------------------------------ textures
MODES = ("clamp", "border", "wrap", "mirror")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("filt", ("point", "linear"))
@pytest.mark.parametrize("normalized", (False, True))
def test_tex1d_modes(mod, mode, filt, normalized):
    T = np.array([3.0, -1.0, 4.0, 1.5, 9.0, 2.0, -6.0, 5.0], np.float32)
    x0, dx = (-0.4, 0.047) if normalized else (-3.3, 0.37)
    n = 40
    tex = ptxc.texture(T, filter=filt, address=mode, normalized=normalized)
    out = np.zeros(n, np.float32)
    hybrid_equals_full(mod, "tex1d", 2, 32, [tex, out, x0, dx, n])
    xs = [f32(f32(x0) + f32(i * f32(dx))) for i in range(n)]
    want = np.array([model_fetch(T, [x], filt, mode, normalized) for x in xs], np.float32)
    np.testing.assert_allclose(out, want, rtol=0, atol=2e-6)


def test_tex1d_hand_values(mod):
    """Linear, clamp, unnormalized, T = [0, 10, 20, 30]: at x = 1.25,
    xB = 0.75, i = 0, a = 192/256 -> 0.25*0 + 0.75*10 = 7.5; at x = 2.0,
    xB = 1.5 -> 15; at x = -4: both texels clamp to T[0] = 0; at x = 1.251,
    a = frac(0.751) * 256 = 192.256 -> 192/256: still 7.5 (the 9-bit weight)."""
    T = np.array([0.0, 10.0, 20.0, 30.0], np.float32)
    tex = ptxc.texture(T, filter="linear", address="clamp")
    for x, want in ((1.25, 7.5), (2.0, 15.0), (-4.0, 0.0), (1.251, 7.5), (9.0, 30.0)):
        out = np.zeros(1, np.float32)
        ptxc.launch(mod, "tex1d", 1, 32, [tex, out, x, 0.0, 1], mode="full")
        assert out[0] == want, x


@pytest.mark.parametrize("mode", MODES)
def test_tex2d_linear(mod, mode):
    rng = np.random.default_rng(5)
    T = rng.uniform(-2, 2, (5, 7)).astype(np.float32)
    tex = ptxc.texture(T, filter="linear", address=mode, normalized=True)
    w, h = 24, 9
    out = np.zeros((h, w), np.float32)
    x0, dx, y0, dy = -0.31, 0.071, -0.42, 0.23
    hybrid_equals_full(mod, "tex2d", h, 32, [tex, out, x0, dx, y0, dy, w])
    for j in range(h):
        for i in range(w):
            x = f32(f32(x0) + f32(i * f32(dx)))
            y = f32(f32(y0) + f32(j * f32(dy)))
            assert out[j, i] == pytest.approx(model_fetch(T, [x, y], "linear", mode, True), abs=4e-6)


def test_tex2d_point_unnormalized_border(mod):
    T = np.arange(12, dtype=np.float32).reshape(3, 4)
    tex = ptxc.texture(T, filter="point", address="border")
    out = np.zeros((5, 8), np.float32)
    ptxc.launch(mod, "tex2d", 5, 32, [tex, out, -1.5, 0.75, -1.0, 1.0, 8], mode="full")
    # hand: row j reads y = j - 1 -> texel row j-1 (border outside 0..2);
    # x = -1.5 + 0.75 i -> floor: -2,-1,-1,0,0,1,1,2 ... (i = 0..7: x = -1.5 .. 3.75)
    xs = [math.floor(-1.5 + 0.75 * i) for i in range(8)]
    want = [[T[j - 1, x] if 0 <= j - 1 < 3 and 0 <= x < 4 else 0 for x in xs] for j in range(5)]
    np.testing.assert_array_equal(out, np.array(want, np.float32))


def test_rgba8_normalized_read(mod):
    """uchar4 texture, cudaReadModeNormalizedFloat: v / 255 per channel,
    then bilinear (here at texel centres and half-way points)."""
    rng = np.random.default_rng(2)
    T = rng.integers(0, 256, (4, 6, 4)).astype(np.uint8)
    tex = ptxc.texture(T, filter="linear", address="clamp", channels=4, read="normalized")
    w, h = 12, 4
    out = np.zeros((h, w, 4), np.float32)
    ptxc.launch(mod, "tex2d_rgba", h, 32, [tex, out, 0.5, 0.5, 0.5, 1.0, w], mode="full")
    for c in range(4):
        Tc = T[:, :, c].astype(np.float64) / 255.0
        for j in range(h):
            for i in range(w):
                want = model_fetch(Tc, [0.5 + 0.5 * i, 0.5 + j], "linear", "clamp", False)
                assert out[j, i, c] == pytest.approx(want, abs=2e-6)


def test_tex3d_linear(mod):
    rng = np.random.default_rng(3)
    T = rng.uniform(0, 1, (3, 4, 5)).astype(np.float32)       # (d, h, w)
    tex = ptxc.texture(T, filter="linear", address="clamp")
    w = 16
    out = np.zeros(w, np.float32)
    ptxc.launch(mod, "tex3d", 1, 32, [tex, out, -0.2, 0.37, 1.3, 1.7, w], mode="full")
    for i in range(w):
        x = f32(f32(-0.2) + f32(i * f32(0.37)))
        assert out[i] == pytest.approx(model_fetch(T, [x, 1.3, 1.7], "linear", "clamp", False),
                                       abs=2e-6)


def test_tex1dfetch_linear_memory(mod):
    """tex1Dfetch(t, start + i * stride): T[k] for 0 <= k < n, else 0."""
    T = (np.arange(50, dtype=np.int32) * 3 - 70)
    tex = ptxc.texture(T, linear=True)
    out = np.zeros(40, np.int32)
    hybrid_equals_full(mod, "fetch", 2, 32, [tex, out, 2, 2**32 - 5, 40])
    want = [T[k] if 0 <= k < 50 else 0 for k in (-5 + 2 * i for i in range(40))]
    np.testing.assert_array_equal(out, want)


def test_gather_tld4(mod):
    """tld4.r: the 2x2 footprint of bilinear filtering at (x, y), in the
    order (i, j+1), (i+1, j+1), (i+1, j), (i, j), i = floor(x - 0.5),
    j = floor(y - 0.5), clamped."""
    T = np.arange(20, dtype=np.float32).reshape(4, 5) * 2
    tex = ptxc.texture(T, filter="point", address="clamp")
    out = np.zeros((32, 4), np.float32)
    ptxc.launch(mod, "gather", 1, 32, [tex, out, -0.7, 0.33, 2.2], mode="full")
    for k in range(32):
        x = f32(f32(-0.7) + f32(k * f32(0.33)))
        i, j = math.floor(f32(x - 0.5)), math.floor(f32(2.2) - 0.5)
        cl = lambda a, n: min(max(a, 0), n - 1)          # noqa: E731
        want = [T[cl(j + 1, 4), cl(i, 5)], T[cl(j + 1, 4), cl(i + 1, 5)],
                T[cl(j, 4), cl(i + 1, 5)], T[cl(j, 4), cl(i, 5)]]
        np.testing.assert_array_equal(out[k], want)


# ------------------------------------------------------------ surfaces
def test_surface_read_write(mod):
    S = (np.arange(6 * 20, dtype=np.int32).reshape(6, 20) - 50)
    want = S * 7 - np.arange(20)[None, :] + 100 * np.arange(6)[:, None]
    surf = ptxc.surface(S)
    ptxc.launch(mod, "surf_rw", 6, 32, [surf, 20, 6], mode="full")
    np.testing.assert_array_equal(S, want)


def test_surface_clamp_and_zero(mod):
    """Reads at x + 5 of a 10-wide surface: clamp gives the last element of
    the row for x >= 5, zero gives 0 there."""
    S = np.arange(30, dtype=np.int32).reshape(3, 10) + 1
    surf = ptxc.surface(S)
    clamped = np.zeros((3, 16), np.int32)
    zeroed = np.zeros((3, 16), np.int32)
    ptxc.launch(mod, "surf_modes", 3, 16, [surf, clamped, zeroed, 5], mode="full")
    cols = np.arange(16) + 5
    np.testing.assert_array_equal(clamped, S[:, np.minimum(cols, 9)])
    np.testing.assert_array_equal(zeroed, np.where(cols < 10, S[:, np.minimum(cols, 9)], 0))


def test_surface_trap_is_a_run_time_error(mod):
    S = np.zeros((2, 8), np.int32)
    surf = ptxc.surface(S)
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(mod, "surf_trap", 1, 4, [surf, 8], mode="full")
    msg = str(e.value)
    assert "thread (2,0,0)" in msg and "surface write out of range at (32, 0)" in msg
    assert ".trap" in msg and "sust.b.2d.b32.trap" in msg and "\n" not in msg


# ------------------------------------------------------------ handles, slice
def test_invalid_handle(mod):
    out = np.zeros(32, np.float32)
    with pytest.raises(ptxc.PtxcError, match="invalid texture object handle 123456"):
        ptxc.launch(mod, "tex1d", 1, 32, [123456, out, 0.0, 1.0, 32], mode="full")


def test_surface_handle_as_texture(mod):
    surf = ptxc.surface(np.zeros(4, np.int32))
    with pytest.raises(ptxc.PtxcError, match="it is a surface"):
        ptxc.launch(mod, "tex1d", 1, 32, [surf, np.zeros(32, np.float32), 0.0, 1.0, 32], mode="full")


def test_branch_on_texel_hybrid_equals_full(mod):
    """n = T[x0 + i] (point, clamp) is each lane's loop trip count: the
    hybrid slice must keep the tex, so both modes count the same divergence."""
    T = np.array([0, 3, 1, 4, 2, 0, 5, 1], np.float32)
    tex = ptxc.texture(T)
    out = np.zeros(32, np.int32)
    full = hybrid_equals_full(mod, "tex_branch", 1, 32, [tex, out, 0.5])
    trips = T[np.minimum(np.arange(32), 7)].astype(int)
    want = [sum((k * k) ^ i for k in range(n)) for i, n in enumerate(trips)]
    np.testing.assert_array_equal(out, want)
    assert full.divergent_branch > 0


def test_texture_reference_refused():
    src = """
.version 8.0
.target sm_90
.address_size 64
.global .texref tref;
.visible .entry k(.param .u64 p)
{
  .reg .f32 %f<6>;
  .reg .u64 %rd<2>;
  mov.f32 %f1, 0f00000000;
  tex.1d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [tref, {%f1}];
  ld.param.u64 %rd1, [p];
  st.global.f32 [%rd1], %f2;
  ret;
}
"""
    m = ptxc.parse(src, "ref.ptx")
    with pytest.raises(ptxc.PtxcError, match="texture/surface references .* not supported"):
        ptxc.launch(m, "k", 1, 1, [np.zeros(1, np.float32)], mode="full")


def test_linear_filter_needs_float_result():
    with pytest.raises(ptxc.PtxcError, match="linear filtering needs a float result"):
        ptxc.texture(np.zeros(4, np.int32), filter="linear")


def test_surface_vectors(mod):
    """uchar4 (x, y, z, w) -> (w, z + 1, y, x ^ 0x5a) and short2 (x, y) ->
    (y - 3, 2x), element by element (numpy wraps like the 8/16-bit stores)."""
    rng = np.random.default_rng(9)
    C = rng.integers(0, 256, (3, 10, 4)).astype(np.uint8)
    P = rng.integers(-3000, 3000, (3, 10, 2)).astype(np.int16)
    c0, p0 = C.copy(), P.copy()
    s4, s2 = ptxc.surface(C, channels=4), ptxc.surface(P, channels=2)
    ptxc.launch(mod, "surf_vec", 3, 32, [s4, s2, 10], mode="full")
    want_c = np.stack([c0[..., 3], (c0[..., 2] + 1).astype(np.uint8), c0[..., 1], c0[..., 0] ^ 0x5A], -1)
    want_p = np.stack([(p0[..., 1] - 3).astype(np.int16), (p0[..., 0] * 2).astype(np.int16)], -1)
    np.testing.assert_array_equal(C, want_c)
    np.testing.assert_array_equal(P, want_p)


def test_int16_normalized_read(mod):
    """cudaReadModeNormalizedFloat of signed 16-bit texels: max(v / 32767, -1);
    -32768 reads -1.0 (hand: -32768 / 32767 < -1 is clamped)."""
    T = np.array([-32768, -32767, -1, 0, 1, 16384, 32767, 5], np.int16)
    tex = ptxc.texture(T, read="normalized")
    out = np.zeros(32, np.float32)
    ptxc.launch(mod, "tex1d_norm", 1, 32, [tex, out, 0.5, 1.0], mode="full")
    want = [max(float(T[min(i, 7)]) / 32767.0, -1.0) for i in range(32)]
    np.testing.assert_allclose(out, np.array(want, np.float32), rtol=0, atol=0)
    assert out[0] == -1.0 and out[6] == 1.0


@pytest.mark.parametrize("filt", ("point", "linear"))
def test_layered(mod, filt):
    """tex1DLayered / tex2DLayered: layer L of a layered texture is a texture
    of its own (no filtering across layers): compared with the model on
    that layer's array."""
    rng = np.random.default_rng(4)
    L1 = rng.uniform(-1, 1, (3, 9)).astype(np.float32)          # 3 layers of 9
    L2 = rng.uniform(-1, 1, (3, 4, 9)).astype(np.float32)       # 3 layers of 4 x 9
    t1 = ptxc.texture(L1, filter=filt, address="mirror", normalized=True, layered=True)
    t2 = ptxc.texture(L2, filter=filt, address="wrap", normalized=True, layered=True)
    w = 30
    out1 = np.zeros((3, w), np.float32)
    out2 = np.zeros((3, w), np.float32)
    hybrid_equals_full(mod, "tex_layered", 3, 32, [t1, t2, out1, out2, -0.3, 0.061, 0.37, w])
    for layer in range(3):
        for i in range(w):
            x = f32(f32(-0.3) + f32(i * f32(0.061)))
            assert out1[layer, i] == pytest.approx(
                model_fetch(L1[layer], [x], filt, "mirror", True), abs=2e-6)
            assert out2[layer, i] == pytest.approx(
                model_fetch(L2[layer], [x, 0.37], filt, "wrap", True), abs=2e-6)


def test_layered_texture_with_plain_instruction(mod):
    t = ptxc.texture(np.zeros((2, 8), np.float32), layered=True)
    with pytest.raises(ptxc.PtxcError, match="a layered texture with tex.1d/tex.2d"):
        ptxc.launch(mod, "tex1d", 1, 32, [t, np.zeros(32, np.float32), 0.0, 1.0, 32], mode="full")
