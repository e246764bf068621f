"""Layered and cubemap CUDA arrays under ``ptxc run`` (native/texture.c,
native/memcpy3d.c, runtime/textures.py): tests/cuda_apps/layered_texture.cu
and cubemap_texture.cu, in the style of cuda-samples simpleLayeredTexture
and simpleCubemapTexture (built with nvcc at test time; skipped without
nvcc), run in full and hybrid mode.

Each application writes its results to a file; every value is computed
here with numpy from the CUDA C++ Programming Guide's formulas:
test_textures.model_fetch ("Texture Fetching": 9-bit linear weights, wrap
and clamp), test_texture_layers.cube_face (the "Cubemap Textures" table),
the PTX ISA's .u32 layer operand (clamped to the last layer), CUDA's
cudaMemcpy3D rules (extent and array positions in elements, pointer x in
bytes) and its extent rules for cubemap arrays (cudaErrorInvalidValue = 1).
"""
import os

import numpy as np
import pytest

from runtime_apps import AppBuilder, run_ptxc
from test_runtime_apps import branches, launch_counters
from test_texture_layers import cube_face, model_cube
from test_textures import model_fetch

f32 = np.float32


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("texture_layer_apps"))


def texels(n):
    """The applications' data: texel(i) = ((i * 7919) % 1000) / 16 - 30 (exact)."""
    return (((np.arange(n) * 7919) % 1000) / 16.0 - 30.0).astype(np.float32)


def run_both(app, *args):
    """The output file of a full and a hybrid run (equal), stdout, and the
    two runs' counters (equal)."""
    outs = {}
    for mode in ("full", "hybrid"):
        path = os.path.join(os.path.dirname(app), f"{os.path.basename(app)}-{mode}.bin")
        r = run_ptxc(app, path, *args, mode=mode)
        assert r.returncode == 0, (mode, r.proc.stderr[-3000:])
        outs[mode] = (open(path, "rb").read(), r)
    (data, full), (data2, hybrid) = outs["full"], outs["hybrid"]
    assert data == data2
    assert full.proc.stdout == hybrid.proc.stdout
    assert launch_counters(full) == launch_counters(hybrid)
    assert branches(full) == branches(hybrid)
    return data, full.proc.stdout.splitlines()


def take(buf, pos, n, dtype=np.float32):
    a = np.frombuffer(buf, dtype, n, pos)
    return a, pos + a.nbytes


# ------------------------------------------------------------ layered
@pytest.mark.parametrize("size", [(8, 6, 3), (13, 5, 4)])
def test_layered_texture(apps, size):
    w, h, layers = size
    buf, lines = run_both(apps.build("layered_texture"), *map(str, size))
    data = texels(w * h * layers).reshape(layers, h, w)
    pos = 0
    for dx, dy in ((0.0, 0.0), (0.3, -0.45)):
        out, pos = take(buf, pos, w * h * layers)
        out = out.reshape(layers, h, w)
        if dx == 0.0:          # the sample's check: texel centres give -data + layer exactly
            np.testing.assert_array_equal(out, -data + np.arange(layers, dtype=f32)[:, None, None])
        for layer in range(layers):
            for y in range(h):
                for x in range(w):
                    u = f32(f32(f32(x) + f32(0.5)) + f32(dx)) / f32(w)
                    v = f32(f32(f32(y) + f32(0.5)) + f32(dy)) / f32(h)
                    val = model_fetch(data[layer], [u, v], "linear", "wrap", True)
                    want = f32(-f32(val) + f32(layer))
                    assert out[layer, y, x] == pytest.approx(want, abs=1e-5), (layer, y, x)
    out1, pos = take(buf, pos, 48)
    w1 = 5
    d1 = texels(w1 * layers).reshape(layers, w1)        # rows of w1 texels, one per layer
    for i in range(48):
        x = (i % 16 - 3) * 0.375
        layer = i // 16 * (layers + 1) - 1 + i % 3
        k = min(layer & 0xFFFFFFFF, layers - 1)         # .u32: -1 is the last layer
        assert out1[i] == d1[k, min(max(int(np.floor(x)), 0), w1 - 1)], i
    back, pos = take(buf, pos, w * h * layers, np.int32)
    want = np.full((layers, h, w), -1, np.int32)        # region (2, 1, 1) + extent -> (1, 0, 0)
    z, y, x = np.meshgrid(np.arange(layers - 1), np.arange(h - 1), np.arange(w - 2), indexing="ij")
    want[z, y, x + 1] = (z + 1) * 1000 + (y + 1) * w + (x + 2)
    np.testing.assert_array_equal(back.reshape(layers, h, w), want)
    copied, pos = take(buf, pos, w * h * layers)        # (1, 2, 1) + extent -> (0, 0, 0)
    want = np.zeros((layers, h, w), np.float32)
    want[:layers - 1, :h - 2, :w - 1] = data[1:, 2:, 1:]
    np.testing.assert_array_equal(copied.reshape(layers, h, w), want)
    pitched, pos = take(buf, pos, w * h * layers)       # bytes (4, 1, 1) + extent -> (0, 0, 0)
    want = np.zeros((layers, h, w), np.float32)
    want[:layers - 1, :h - 1, :w - 1] = data[1:, 1:, 1:]
    np.testing.assert_array_equal(pitched.reshape(layers, h, w), want)
    assert pos == len(buf)
    assert lines == [f"2-D layered: {w} x {h} x {layers} flags 1 bits 32",
                     f"1-D layered: 5 x 0 x {layers} flags 1 bits 32",
                     f"layered surface: {w} x {h} x {layers} flags 3 bits 32",
                     "copy between element sizes 4 and 2: 1", "layered depth 0: 1", "cudaMallocArray layered: 1", "3-D height 0: 1",
                     "copy past the last layer: 1", "copy to array and pointer: 1", "done"]


# ------------------------------------------------------------ cubemap
def sample_direction(face, u, v):
    """The direction simpleCubemapTexture's kernel reads face ``face`` with."""
    return [(1, -v, -u), (-1, -v, u), (u, 1, v), (u, -1, -v), (u, -v, 1), (-u, -v, -1)][face]


@pytest.mark.parametrize("width", [8, 5])
def test_cubemap_texture(apps, width):
    buf, lines = run_both(apps.build("cubemap_texture"), str(width))
    n = 6 * width * width
    F = texels(n).reshape(6, width, width)
    pos = 0
    for dx in (f32(0.0), f32(1.0) / f32(3.0)):
        out, pos = take(buf, pos, n)
        out = out.reshape(6, width, width)
        if dx == 0:            # the sample's check: -data at the texel centres
            np.testing.assert_array_equal(out, -F)
        for face in range(6):
            for y in range(width):
                for x in range(width):
                    q = f32(f32(f32(x) + f32(0.5)) + dx) / f32(width)
                    u = f32(f32(q * f32(2)) - f32(1))
                    v = f32(f32(f32(f32(y) + f32(0.5)) / f32(width) * f32(2)) - f32(1))
                    d = [f32(c) for c in sample_direction(face, u, v)]
                    assert cube_face(*d)[0] == face
                    want = -f32(model_cube(F, d, "linear", "wrap"))
                    assert out[face, y, x] == pytest.approx(want, abs=1e-5), (face, y, x)
    nd = 96
    dirs = np.array([((i * 37 + i // 3) % 17) / 4.0 - 2.0 for i in range(3 * nd)], np.float32)
    dirs = dirs.reshape(nd, 3)
    pts, pos = take(buf, pos, nd)
    for i in range(nd):
        assert pts[i] == model_cube(F, dirs[i], "point", "clamp"), (i, dirs[i])
    LC = texels(4 * 4 * 12).reshape(12, 4, 4)
    lay, pos = take(buf, pos, nd)
    for i in range(nd):
        cube = -1 if i % 4 == 3 else 5 if i % 4 == 2 else i % 2
        k = min(cube & 0xFFFFFFFF, 1)
        want = model_cube(LC, dirs[i], "linear", "clamp", cube=k)
        assert lay[i] == pytest.approx(want, abs=1e-5), i
    faces, pos = take(buf, pos, 4 * width * width)
    f, y, x = np.meshgrid(np.arange(2, 6), np.arange(width), np.arange(width), indexing="ij")
    np.testing.assert_array_equal(faces.reshape(4, width, width), (f * 100 + y * width + x + 0.5))
    assert pos == len(buf)
    assert lines == [f"cubemap: {width} x {width} x 6 flags 4", "texel centres: PASSED",
                     "layered cubemap: 4 x 4 x 12 flags 5", f"cubemap surface: {width} x {width} x 6 flags 6",
                     "copy past the last face: 1",
                     "cubemap 4 x 5 x 6: 1", "cubemap 4 x 4 x 5: 1", "cubemap 4 x 4 x 12: 1",
                     "layered cubemap 4 x 4 x 8: 1", "layered cubemap 4 x 4 x 0: 1",
                     "cubemap 0 x 0 x 6: 1", "layered cubemap 3 x 3 x 18: 0", "done"]


def test_seamless_cubemap_is_refused(apps):
    """Filtering across faces (cudaTextureDesc.seamlessCubemap) is not
    supported: one line naming the call, non-zero exit, nothing after it."""
    r = run_ptxc(apps.build("cubemap_texture"), "seamless", mode="full")
    assert r.returncode != 0
    assert "cudaCreateTextureObject: cudaTextureDesc.seamlessCubemap" in r.proc.stderr
    assert "not supported yet" in r.proc.stderr
    assert "seamless texture made" not in r.proc.stdout
    assert "Traceback" not in r.proc.stderr
