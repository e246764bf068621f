"""Layered and cubemap texture fetches: ``tex.a1d``, ``tex.a2d``,
``tex.cube`` and ``tex.acube`` (the numpy model the Python path runs;
texture_layered_ir.py and texture_cube_ir.py repeat it in generated code).

PTX ISA, "Texture Instructions: tex" (geometries ``.a1d/.a2d``: "the first
element is interpreted as an unsigned integer index (.u32) into the
texture array", the rest are the coordinates within the selected layer;
``.cube``: a ``.v4.f32`` vector ``{x, y, z, _}`` is a direction from the
cube's centre, "the coordinate of the largest magnitude (the major axis)
selects the cube face", the other two are divided by it; ``.acube``: first
a ``.u32`` cubemap index, then ``x, y, z``). CUDA C++ Programming Guide,
"Layered Textures" (filtering only within a layer) and "Cubemap Textures"
(the table below; the face is then addressed with the normalized
coordinates ``((s / m + 1) / 2, (t / m + 1) / 2)``).

* Layer (or cubemap) index: a ``.u32``, so a negative ``int`` is a huge
  index. The ISA states no rule for an index past the last layer; ptxc
  clamps it to the last layer (cubemap), as OpenGL and Direct3D define
  array-texture indexing (not checked on a GPU).
* Face selection, CUDA's table "Cubemap Fetch" (``m`` the major axis):

  ======================================  ========  ====  ====  ====  ====
  condition                                         face  m     s     t
  ======================================  ========  ====  ====  ====  ====
  ``|x| > |y|`` and ``|x| > |z|``         x >= 0    0     x     -z    -y
                                          x < 0     1     -x    z     -y
  ``|y| > |x|`` and ``|y| > |z|``         y >= 0    2     y     x     z
                                          y < 0     3     -y    x     -z
  ``|z| > |x|`` and ``|z| > |y|``         z >= 0    4     z     x     -y
                                          z < 0     5     -z    -x    -y
  ======================================  ========  ====  ====  ====  ====

  Ties, which the table leaves open, go to z before y before x (x needs
  both strict inequalities, y then needs ``|y| > |z|``, z takes the rest,
  also NaN). All steps in float32: ``u = (s / m + 1) * 0.5``.
* The face is then fetched as a 2-D texture with normalized coordinates
  (whatever ``normalizedCoords`` says: the guide defines the face
  coordinates as normalized), the texture's filter, address modes (wrap and
  mirror apply, the coordinates being normalized) and read mode; linear
  filtering stays within the face (no seamless filtering across faces).
  Layered cubemap ``n``, face ``f`` is layer ``6 n + f``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ptxc.backends.llvm.ops import texture_objects as T


def layer_index(raw, count: int) -> np.ndarray:
    """The ``.u32`` layer operand (int32 or uint32 bits) clamped to ``count - 1``."""
    u = np.asarray(raw).astype(np.int64) & 0xFFFFFFFF
    return np.minimum(u, count - 1)


def one_layer(tex: T.Texture, k: int, **changes) -> T.Texture:
    """Layer ``k`` of a layered or cubemap texture as a texture of its own."""
    step = tex.pitch * tex.dims[1]
    return replace(tex, memory=tex.memory[k * step:(k + 1) * step], dims=tex.dims[:2] + (1,),
                   layered=False, cubemap=False, **changes)


def per_layer(tex: T.Texture, layer: np.ndarray, fetch, **changes) -> np.ndarray:
    """(n, channels): ``fetch(texture of layer k, lanes of layer k)`` for each layer used."""
    out = np.zeros((len(layer), tex.fmt.channels))
    for k in np.unique(layer):
        pick = layer == k
        vals = fetch(one_layer(tex, int(k), **changes), pick)
        out = out.astype(vals.dtype) if out.dtype != vals.dtype else out
        out[pick] = vals
    return out


def sample_layered(tex: T.Texture, coords: list, integer: bool, layer) -> np.ndarray:
    """tex.a1d / tex.a2d: sample layer ``layer`` (clamped to the layers) of a
    layered texture; each layer is a texture of its own (no filtering across
    layers). ``layer`` None: a plain tex.1d/2d/3d on a layered or cubemap
    texture (an error)."""
    if tex.cubemap:
        raise T.TextureError(f"texture object {tex.handle} is a cubemap: it needs tex.cube/tex.acube "
                             "(texCubemap, texCubemapLayered)")
    if layer is None or not tex.layered:
        what = "a layered texture with tex.1d/tex.2d" if layer is None else \
            "tex.a1d/tex.a2d on a texture that is not layered"
        raise T.TextureError(f"texture object {tex.handle}: {what}")
    if len(coords) == 1 and tex.dims[1] != 1:      # tex.a2d also reads layers of height 1
        raise T.TextureError(f"texture object {tex.handle} has 2-D layers; the instruction "
                             "reads 1-D ones (tex1DLayered)")
    layer = layer_index(layer, tex.dims[2])
    return per_layer(tex, layer, lambda one, pick: T.sample(one, [c[pick] for c in coords], integer))


def cube_coords(x, y, z) -> tuple:
    """(face, u, v) of direction (x, y, z): CUDA's "Cubemap Fetch" table in float32."""
    x, y, z = (np.asarray(c, np.float32) for c in (x, y, z))
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    xmaj = (ax > ay) & (ax > az)
    ymaj = ~xmaj & (ay > az)
    face = np.where(xmaj, np.where(x >= 0, 0, 1),
                    np.where(ymaj, np.where(y >= 0, 2, 3), np.where(z >= 0, 4, 5)))
    m = np.choose(face, [x, -x, y, -y, z, -z])
    s = np.choose(face, [-z, z, x, x, x, -x])
    t = np.choose(face, [-y, -y, z, -z, -y, -y])
    half, one = np.float32(0.5), np.float32(1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = (s / m + one) * half
        v = (t / m + one) * half
    return face.astype(np.int64), u.astype(np.float32), v.astype(np.float32)


def sample_cube(tex: T.Texture, coords: list, cube) -> np.ndarray:
    """tex.cube (``cube`` None) / tex.acube (``cube`` the .u32 cubemap index)."""
    if not tex.cubemap:
        raise T.TextureError(f"texture object {tex.handle} is not a cubemap (tex.cube/tex.acube "
                             "need a CUDA array made with cudaArrayCubemap)")
    if (cube is not None) != tex.layered:
        what = "a layered cubemap with tex.cube (texCubemap): it needs tex.acube" if tex.layered \
            else "tex.acube (texCubemapLayered) on a cubemap that is not layered"
        raise T.TextureError(f"texture object {tex.handle}: {what}")
    face, u, v = cube_coords(*coords[:3])
    layer = face if cube is None else face + 6 * layer_index(cube, tex.dims[2] // 6)
    return per_layer(tex, layer, lambda one, pick: T.sample(one, [u[pick], v[pick]], False),
                     normalized=True)
