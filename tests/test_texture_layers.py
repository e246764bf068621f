"""Layered and cubemap textures and surfaces through ``ptxc.launch``
(backends/llvm/ops/texture_layers.py, texture_cube_ir.py,
texture_layered_ir.py, surface_ir.py) with kernels nvcc compiled from
tests/cuda/texture_layers.cu (`nvcc -ptx -arch=sm_90 -O3
texture_layers.cu -o texture_layers.sm90.ptx`).

Expected values come from a model written here from the CUDA C++
Programming Guide's "Cubemap Textures" table (face, m, s, t; the face read
at ((s/m + 1)/2, (t/m + 1)/2) in normalized coordinates) and
test_textures.model_fetch (the guide's "Texture Fetching" formulas), and
the PTX ISA's ``.u32`` layer operand (a negative ``int`` is a huge index,
clamped to the last layer); a few values are derived by hand in the
docstrings. Every fetch also runs on the Python path
(``texture_native.disabled()``) and must give the same bits.
"""
import os

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm.ops import texture_native
from test_textures import model_fetch

PTX = os.path.join(os.path.dirname(__file__), "cuda", "texture_layers.sm90.ptx")
TEX_CB = "ptxc.backends.llvm.ops.texture._callback"
f32 = np.float32


@pytest.fixture(scope="module")
def mod():
    return ptxc.load(PTX)


# ------------------------------------------------------------ the model
def cube_face(x, y, z):
    """(face, u, v): the guide's table; ties go to z, then y (x needs
    |x| > |y| and |x| > |z|, y then needs |y| > |z|)."""
    x, y, z = f32(x), f32(y), f32(z)
    if abs(x) > abs(y) and abs(x) > abs(z):
        face, m, s, t = (0, x, -z, -y) if x >= 0 else (1, -x, z, -y)
    elif abs(y) > abs(z):
        face, m, s, t = (2, y, x, z) if y >= 0 else (3, -y, x, -z)
    else:
        face, m, s, t = (4, z, x, -y) if z >= 0 else (5, -z, -x, -y)
    return face, f32(f32(f32(s / m) + f32(1)) * f32(0.5)), f32(f32(f32(t / m) + f32(1)) * f32(0.5))


def model_cube(F, d, filt, mode, cube=0):
    """texCubemap(Layered) of faces F (shape (6 n, w, w)) at direction d."""
    face, u, v = cube_face(*d)
    return model_fetch(F[6 * cube + face], [u, v], filt, mode, True)


def launch_both(mod, kernel, grid, block, make):
    """Run natively and on the Python path; the outputs (same bits in both),
    and the callbacks into Python of each."""
    res = []
    for native in (True, False):
        args, outs = make()
        callbacks.reset_calls()
        if native:
            ptxc.launch(mod, kernel, grid, block, args, mode="full")
        else:
            with texture_native.disabled():
                ptxc.launch(mod, kernel, grid, block, args, mode="full")
        res.append((outs, callbacks.calls()[TEX_CB]))
    (o1, n1), (o2, n2) = res
    for a, b in zip(o1, o2):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
    return o1, (n1, n2)


def directions(rng, n):
    """Random directions plus axis-aligned ones, ties and signed zeros."""
    special = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
               (1, 1, 0.5), (1, 0.5, 1), (0.5, -1, -1), (-1, -1, -1), (-0.0, 2, -0.0),
               (3, -2.9999, 0.1), (0.25, 0.3, -0.31), (-7, 6.5, 6.9)]
    d = rng.uniform(-1, 1, (n - len(special), 3)) * rng.uniform(0.1, 10, (n - len(special), 1))
    return np.concatenate([np.array(special, np.float32), d.astype(np.float32)])


# ------------------------------------------------------------ cubemaps
def test_cube_faces_by_hand(mod):
    """A 4 x 4 cubemap with texel (face, x, y) = 16 face + 4 y + x, point
    sampling: (1, .1, .2) is face 0 (m 1, s -.2, t -.1: u .4, v .45, texel
    (1, 1)) = 5; (-1, .3, -.4) face 1 (s -.4, t -.3: (1, 1)) = 21; (.2, 1,
    .1) face 2 (s .2, t .1: (2, 2)) = 42; (.2, -1, .1) face 3 (s .2, t -.1:
    (2, 1)) = 54; (.1, .2, 1) face 4 (s .1, t -.2: (2, 1)) = 70; (.1, .2,
    -1) face 5 (s -.1, t -.2: (1, 1)) = 85."""
    faces = np.arange(96, dtype=np.float32).reshape(6, 4, 4)
    t = ptxc.texture(faces, cubemap=True)
    d = np.array([[1, .1, .2], [-1, .3, -.4], [.2, 1, .1], [.2, -1, .1], [.1, .2, 1], [.1, .2, -1]],
                 np.float32)

    def make():
        out = np.zeros(6, np.float32)
        return [t, d.reshape(-1), out, 6], [out]
    (out,), calls = launch_both(mod, "cube_at", 1, 32, make)
    assert out.tolist() == [5, 21, 42, 54, 70, 85]
    assert calls == (0, 1)


def test_cube_ties_by_hand(mod):
    """Ties the table leaves open: (1, 1, .5) is face 2 (y before x; s 1, t
    .5: u 1, v .75 -> texel (3, 3), clamp) = 47; (1, .5, 1) face 4 (z before
    x; s 1, t -.5: (3, 1)) = 71; (-1, -1, -1) face 5 (s 1, t 1: (3, 3)) = 95."""
    faces = np.arange(96, dtype=np.float32).reshape(6, 4, 4)
    t = ptxc.texture(faces, cubemap=True)
    d = np.array([[1, 1, .5], [1, .5, 1], [-1, -1, -1]], np.float32)

    def make():
        out = np.zeros(3, np.float32)
        return [t, d.reshape(-1), out, 3], [out]
    (out,), _ = launch_both(mod, "cube_at", 1, 32, make)
    assert out.tolist() == [47, 71, 95]


@pytest.mark.parametrize("mode", ("wrap", "clamp", "border", "mirror"))
@pytest.mark.parametrize("filt", ("point", "linear"))
@pytest.mark.parametrize("normalized", (False, True))
def test_cube_random_directions(mod, filt, mode, normalized):
    """200 directions in 7 warps (the last partial) against the model; the
    face coordinates are normalized whatever normalizedCoords says."""
    rng = np.random.default_rng(11)
    F = rng.uniform(-1, 1, (6, 5, 5)).astype(np.float32)
    t = ptxc.texture(F, filter=filt, address=mode, normalized=normalized, cubemap=True)
    d = directions(rng, 200)

    def make():
        out = np.zeros(200, np.float32)
        return [t, d.reshape(-1), out, 200], [out]
    (out,), calls = launch_both(mod, "cube_at", 7, 32, make)
    assert calls == (0, 7)
    for i in range(200):
        want = model_cube(F, d[i], filt, mode)
        assert out[i] == pytest.approx(want, abs=2e-6), (i, d[i])


def test_cube_border_colour(mod):
    """Border mode on a face: linear filtering at the face's edge mixes the
    border colour (u = (s/m + 1)/2 = 0.05 on a 2-wide face: x = 0.1, xB =
    -0.4, i = -1, weight 0.6 -> .4 border + .6 texel 0)."""
    F = np.full((6, 2, 2), 10.0, np.float32)
    t = ptxc.texture(F, filter="linear", address="border", cubemap=True, border=(-5.0, 0, 0, 0))
    d = np.array([[1, 0, 0.9]], np.float32)          # face 0: s = -0.9, t = 0: u .05, v .5

    def make():
        out = np.zeros(1, np.float32)
        return [t, d.reshape(-1), out, 1], [out]
    (out,), _ = launch_both(mod, "cube_at", 1, 32, make)
    w = np.floor(0.6 * 256 + 0.5) / 256
    assert out[0] == pytest.approx((1 - w) * -5.0 + w * 10.0, abs=1e-6)


def test_cube_int4_channels(mod):
    """Four int32 channels, element reads: the texel of the model's face."""
    rng = np.random.default_rng(5)
    F = rng.integers(-1000, 1000, (6, 3, 3, 4)).astype(np.int32)
    t = ptxc.texture(F, channels=4, cubemap=True)
    d = directions(rng, 40)

    def make():
        out = np.zeros((40, 4), np.int32)
        return [t, d.reshape(-1), out, 40], [out]
    (out,), calls = launch_both(mod, "cube_at4", 2, 32, make)
    assert calls == (0, 2)
    for i in range(40):
        face, u, v = cube_face(*d[i])
        x, y = min(int(np.floor(u * f32(3))), 2), min(int(np.floor(v * f32(3))), 2)
        assert out[i].tolist() == F[face, max(y, 0), max(x, 0)].tolist(), i


@pytest.mark.parametrize("filt", ("point", "linear"))
def test_cube_layered(mod, filt):
    """3 cubemaps (18 layers); cube index -1 and INT_MIN are huge .u32
    indices and 5, 7 are past the end: all read cubemap 2."""
    rng = np.random.default_rng(7)
    F = rng.uniform(0, 1, (18, 4, 4)).astype(np.float32)
    t = ptxc.texture(F, filter=filt, address="wrap", cubemap=True, layered=True)
    n = 64
    d = directions(rng, n)
    cube = np.array([0, 1, 2, -1, 5, 7, -2**31] * 10, np.int32)[:n]

    def make():
        out = np.zeros(n, np.float32)
        return [t, d.reshape(-1), cube, out, n], [out]
    (out,), calls = launch_both(mod, "cube_layered_at", 2, 32, make)
    assert calls == (0, 2)
    for i in range(n):
        want = model_cube(F, d[i], filt, "wrap", cube=min(int(cube[i]) & 0xFFFFFFFF, 2))
        assert out[i] == pytest.approx(want, abs=2e-6), i


@pytest.mark.parametrize("kernel, args, message", [
    ("cube_at", "plain", "is not a cubemap"),
    ("cube_at", "layered", "a layered cubemap with tex.cube"),
    ("cube_layered_at", "cube", r"tex.acube \(texCubemapLayered\) on a cubemap that is not layered"),
])
def test_cube_geometry_errors(mod, kernel, args, message):
    F = np.zeros((12, 2, 2), np.float32)
    t = {"plain": lambda: ptxc.texture(F[0]),
         "layered": lambda: ptxc.texture(F, cubemap=True, layered=True),
         "cube": lambda: ptxc.texture(F[:6], cubemap=True)}[args]()
    d = np.ones(3, np.float32)
    a = [t, d, np.zeros(1, np.int32), np.zeros(1, np.float32), 1] if kernel == "cube_layered_at" \
        else [t, d, np.zeros(1, np.float32), 1]
    with pytest.raises(ptxc.PtxcError, match=message):
        ptxc.launch(mod, kernel, 1, 32, a, mode="full")


def test_layered_fetch_of_a_cubemap_is_an_error(mod):
    t = ptxc.texture(np.zeros((6, 2, 2), np.float32), cubemap=True)
    l1 = ptxc.texture(np.zeros((2, 4), np.float32), layered=True)
    one = np.zeros(1, np.float32)
    with pytest.raises(ptxc.PtxcError, match="is a cubemap: it needs tex.cube"):
        ptxc.launch(mod, "layered_at", 1, 32, [l1, t, one, one, np.zeros(1, np.int32), one,
                                                np.zeros(1, np.float32), 1], mode="full")


@pytest.mark.parametrize("shape, layered", [((6, 4, 5), False), ((5, 4, 4), False),
                                            ((12, 4, 4), False), ((7, 4, 4), True), ((6, 4), False)])
def test_cubemap_shapes(shape, layered):
    """CUDA's extent rules: width == height, 6 faces (a multiple of 6 when layered)."""
    with pytest.raises(ptxc.PtxcError, match="cubemap needs shape"):
        ptxc.texture(np.zeros(shape, np.float32), cubemap=True, layered=layered)


# ------------------------------------------------------------ layered
@pytest.mark.parametrize("filt", ("point", "linear"))
def test_layer_operand_is_unsigned(mod, filt):
    """The layer is a .u32: -1 and INT_MIN clamp to the last layer (2), not
    to layer 0; 1 reads layer 1. By hand (point, x = 1.5, layers of 1-D
    texels 10 layer + x): layer -1 -> 21, INT_MIN -> 21, 1 -> 11, 0 -> 1."""
    L1 = (np.arange(4, dtype=np.float32)[None, :] + 10 * np.arange(3, dtype=np.float32)[:, None])
    L2 = np.arange(3 * 2 * 4, dtype=np.float32).reshape(3, 2, 4)
    t1 = ptxc.texture(L1, filter=filt, layered=True)
    t2 = ptxc.texture(L2, filter=filt, layered=True)
    layer = np.array([-1, -2**31, 1, 0, 2, 3], np.int32)
    x = np.full(6, 1.5, np.float32)
    y = np.full(6, 1.25, np.float32)

    def make():
        o1, o2 = np.zeros(6, np.float32), np.zeros(6, np.float32)
        return [t1, t2, x, y, layer, o1, o2, 6], [o1, o2]
    (o1, o2), calls = launch_both(mod, "layered_at", 1, 32, make)
    assert calls == (0, 2)
    assert o1.tolist() == [21, 21, 11, 1, 21, 21]
    for i, k in enumerate((2, 2, 1, 0, 2, 2)):
        assert o2[i] == pytest.approx(model_fetch(L2[k], [1.5, 1.25], filt, "clamp", False), abs=1e-6)


# ------------------------------------------------------------ surfaces
def test_surface_2d_layered(mod):
    """surf2DLayeredread/write (suld/sust.b.a2d): v -> 3 v + 1000 layer - x
    on 3 layers of 5 x 4 ints; the same bits natively and in Python."""
    S0 = np.arange(60, dtype=np.int32).reshape(3, 4, 5) * 7 - 100

    def make():
        S = S0.copy()
        return [ptxc.surface(S, layered=True), 5, 4], [S]
    (S,), calls = launch_both(mod, "surf2d_layered", 3, 32, make)
    x = np.arange(5)[None, None, :]
    layer = np.arange(3)[:, None, None]
    np.testing.assert_array_equal(S, 3 * S0 + 1000 * layer - x)
    assert calls == (0, 6)          # one warp per layer (20 texels), a suld and a sust each


def test_surface_1d_layered(mod):
    """surf1DLayered of unsigned shorts (suld/sust.b.a1d.b16): v ^ (layer << 8 | x)."""
    S0 = np.arange(4 * 9, dtype=np.uint16).reshape(4, 9) * 1001

    def make():
        S = S0.copy()
        return [ptxc.surface(S, layered=True), 9], [S]
    (S,), calls = launch_both(mod, "surf1d_layered", 4, 32, make)
    want = S0 ^ ((np.arange(4)[:, None] << 8) | np.arange(9)[None, :]).astype(np.uint16)
    np.testing.assert_array_equal(S, want)
    assert calls == (0, 8)          # one warp per layer, a suld and a sust each


def test_surface_cubemap_and_layered_cubemap(mod):
    """surfCubemap (face = layer) and surfCubemapLayered (layer 6 cube + face,
    float2 texels)."""
    C0 = np.arange(6 * 3 * 3, dtype=np.int32).reshape(6, 3, 3)

    def make():
        C = C0.copy()
        return [ptxc.surface(C, layered=True), 3], [C]
    (C,), _ = launch_both(mod, "surf_cube", 6, 32, make)
    f, y, x = np.meshgrid(np.arange(6), np.arange(3), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(C, f * 10000 + y * 100 + x - C0)
    P0 = np.random.default_rng(2).uniform(-9, 9, (12, 2, 2, 2)).astype(np.float32)

    def make2():
        P = P0.copy()
        return [ptxc.surface(P, channels=2, layered=True), 2], [P]
    (P,), _ = launch_both(mod, "surf_cube_layered", (6, 2), 32, make2)
    cube = (np.arange(12) // 6).astype(np.float32)[:, None, None]
    np.testing.assert_array_equal(P[..., 0], P0[..., 1])
    np.testing.assert_array_equal(P[..., 1], P0[..., 0] + cube)


@pytest.mark.parametrize("layer, mode, where", [
    (1, 1, (1, 1)), (9, 1, (2, 1)), (-1, 1, (2, 1)), (5, 2, None), (-1, 2, None)])
def test_surface_layer_boundary_modes(mod, layer, mode, where):
    """The layer is a .u32 coordinate under the boundary mode: .clamp puts
    layer 9 and -1 (a huge index) on the last layer (2), .zero drops them."""
    S = np.zeros((3, 2, 2), np.int32)
    ptxc.launch(mod, "surf_layered_at", 1, 1, [ptxc.surface(S, layered=True), 4, 1, layer, mode, 77],
                mode="full")
    want = np.zeros((3, 2, 2), np.int32)
    if where:
        want[where[0], 1, where[1]] = 77
    np.testing.assert_array_equal(S, want)


def test_surface_layer_trap(mod):
    S = np.zeros((3, 2, 2), np.int32)
    with pytest.raises(ptxc.PtxcError, match=r"surface write out of range at \(4, 1, 3\) "
                                             r"\(x in bytes, y, layer\).*2 x 2 elements x 3 layers"):
        ptxc.launch(mod, "surf_layered_at", 1, 1, [ptxc.surface(S, layered=True), 4, 1, 3, 0, 5],
                    mode="full")
    assert not S.any()


def test_layered_surface_needs_layered_instructions(mod):
    """A layered surface read with surf2Dread (suld.b.2d) and a plain one
    with surf2DLayeredwrite are errors, natively and in Python."""
    plain = ptxc.load(os.path.join(os.path.dirname(__file__), "cuda", "textures.sm90.ptx"))
    S = np.zeros((2, 3, 4), np.int32)
    with pytest.raises(ptxc.PtxcError, match="is layered .*it needs surf1DLayered"):
        ptxc.launch(plain, "surf_rw", 1, 32, [ptxc.surface(S, layered=True), 4, 3], mode="full")
    with pytest.raises(ptxc.PtxcError, match="is not layered: .a1d/.a2d"):
        ptxc.launch(mod, "surf_layered_at", 1, 1, [ptxc.surface(S[0]), 0, 0, 0, 0, 1], mode="full")


def test_2d_layers_of_height_one(mod):
    """A 2-D layered array of height 1 (extent (w, 1, layers)) has the shape
    of a 1-D layered one (w, 0, layers): tex2DLayered reads it (here with
    border mode: y = 1.25 is outside the one row, so point sampling reads
    the border 0 and y = 0.5 the row), and tex1DLayered of 2-D layers
    (height 2) is an error."""
    L = np.arange(12, dtype=np.float32).reshape(3, 1, 4) + 1
    t1 = ptxc.texture(L[:, 0, :], layered=True)
    t2 = ptxc.texture(L, address="border", layered=True)
    x = np.array([0.5, 2.5, 3.5], np.float32)
    layer = np.array([0, 1, 2], np.int32)
    for y, want in ((0.5, [1, 7, 12]), (1.25, [0, 0, 0])):
        def make():
            o1, o2 = np.zeros(3, np.float32), np.zeros(3, np.float32)
            return [t1, t2, x, np.full(3, y, np.float32), layer, o1, o2, 3], [o1, o2]
        (o1, o2), calls = launch_both(mod, "layered_at", 1, 32, make)
        assert o1.tolist() == [1, 7, 12] and o2.tolist() == want and calls == (0, 2)
    tall = ptxc.texture(np.zeros((3, 2, 4), np.float32), layered=True)
    one = np.zeros(3, np.float32)
    with pytest.raises(ptxc.PtxcError, match="has 2-D layers; the instruction reads 1-D ones"):
        ptxc.launch(mod, "layered_at", 1, 32, [tall, t2, x, one, layer, one, np.zeros(3, np.float32), 3],
                    mode="full")


@pytest.mark.parametrize("lod", [0.0, 2.7, -1.5])
def test_lod_and_gradient_forms_read_level_zero(mod, lod):
    """tex.level.a2d, tex.level.cube and tex.grad.cube: a texture without
    mipmaps has level 0 only, whatever the LOD or gradients say; the values
    are the model's plain fetches (linear filtering)."""
    rng = np.random.default_rng(3)
    L = rng.uniform(0, 1, (2, 3, 5)).astype(np.float32)
    F = rng.uniform(0, 1, (6, 4, 4)).astype(np.float32)
    t2 = ptxc.texture(L, filter="linear", address="wrap", normalized=True, layered=True)
    tc = ptxc.texture(F, filter="linear", address="clamp", cubemap=True)
    x = np.linspace(-0.9, 0.9, 20).astype(np.float32)

    def make():
        outs = [np.zeros(20, np.float32) for _ in range(3)]
        return [t2, tc, x, lod, *outs, 20], outs
    (o1, o2, o3), calls = launch_both(mod, "lod_at", 1, 32, make)
    assert calls == (0, 3)
    for i in range(20):
        assert o1[i] == pytest.approx(model_fetch(L[1], [x[i], 0.5], "linear", "wrap", True), abs=2e-6)
        want = model_cube(F, [x[i], 1.0, 0.25], "linear", "clamp")
        assert o2[i] == pytest.approx(want, abs=2e-6) and o3[i] == o2[i]


def test_hybrid_equals_full_for_cubemap_fetches(mod):
    """A hybrid run of texCubemapLayered (a fetch whose value only reaches a
    store) gives the full run's counters."""
    rng = np.random.default_rng(8)
    t = ptxc.texture(rng.uniform(0, 1, (12, 3, 3)).astype(np.float32), filter="linear",
                     cubemap=True, layered=True)
    d = directions(rng, 50)
    args = [t, d.reshape(-1), np.arange(50, dtype=np.int32) % 3, np.zeros(50, np.float32), 50]
    full = ptxc.launch(mod, "cube_layered_at", 2, 32, args, mode="full")
    hybrid = ptxc.launch(mod, "cube_layered_at", 2, 32, args, mode="hybrid")
    assert hybrid.counters() == full.counters()
