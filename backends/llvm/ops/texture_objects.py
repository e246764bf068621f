"""Texture and surface objects: the handle table and the fetch semantics.

A texture or surface *handle* is a 64-bit number (CUDA's
``cudaTextureObject_t`` / ``cudaSurfaceObject_t``). Handles index one
process-wide table (``REGISTRY``) of descriptors: the memory (a uint8 numpy
view, used in place), the element format, the dimensions and pitch, and for
textures the sampler state (address modes, filter, coordinate and read
modes). The CUDA runtime replacement (ptxc/runtime/textures.py) fills it
from ``cudaCreateTextureObject``/``cudaCreateSurfaceObject``; standalone
launches use :func:`texture` and :func:`surface`, whose results are passed
as kernel arguments. The executor (backends/llvm/ops/texture.py) calls
:func:`fetch`, :func:`gather`, :func:`surface_load` and
:func:`surface_store` once per warp-level instruction; the table lives
here, in the backend, because that callback reads it and the backend imports
nothing above it (``ptxc.texture``, ``ptxc.surface`` and ptxc/runtime use it
from here).

Semantics (CUDA C++ Programming Guide, appendix "Texture Fetching"; PTX ISA
"Texture Instructions" and "Surface Instructions"):

* point sampling: ``tex(x) = T[floor(x)]``;
* linear filtering: ``xB = x - 0.5``, ``i = floor(xB)``, ``a = frac(xB)``
  stored in 9-bit fixed point with 8 fractional bits (ptxc rounds
  ``a * 256`` to nearest, ties up: ``floor(a * 256 + 0.5) / 256``; the
  guide does not say which rounding),
  ``tex(x) = (1 - a) T[i] + a T[i+1]`` (bilinear in 2-D, trilinear in 3-D);
* normalized coordinates are multiplied by the size first (in float32);
* address modes act on the texel indices: clamp to ``[0, N-1]``, border
  (an index outside reads 0), wrap (``i mod N``), mirror (period ``2N``);
  wrap and mirror apply to normalized coordinates only, otherwise clamp is
  used (as CUDA documents);
* ``cudaReadModeNormalizedFloat`` turns 8/16-bit integers into
  ``v / (2^n - 1)`` (unsigned) or ``max(v / (2^(n-1) - 1), -1)`` (signed);
* linear memory (``tex1Dfetch``): integer index, no filtering, an index
  outside the buffer reads 0;
* surfaces: byte x coordinate, ``.trap`` out-of-range is a run-time error,
  ``.clamp`` clamps to the last element, ``.zero`` loads 0 / drops stores.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

import numpy as np

from ptxc.errors import PtxcError

from ptxc.backends.llvm.ops import texture_native

ADDRESS = ("wrap", "clamp", "mirror", "border")          # cudaTextureAddressMode 0..3
FILTERS = ("point", "linear")                             # cudaTextureFilterMode 0..1
KINDS = ("s", "u", "f")                                   # cudaChannelFormatKind 0..2

_handles = itertools.count(1)
_lock = threading.Lock()
REGISTRY: dict[int, "Texture | Surface"] = {}


class TextureError(Exception):
    """A run-time texture error: the message names the handle and the problem."""


@dataclass
class Format:
    """Element format: channel kind ('s', 'u', 'f'), bits per channel, channels."""
    kind: str
    bits: int
    channels: int

    def __post_init__(self):
        if self.kind not in KINDS or self.bits not in (8, 16, 32) or self.channels not in (1, 2, 4) \
                or (self.kind == "f" and self.bits == 8):
            raise PtxcError(f"texture format not supported: {self.channels} x {self.kind}{self.bits} "
                            "(1, 2 or 4 channels of 8/16/32-bit integers or 16/32-bit floats)")

    @property
    def dtype(self) -> np.dtype:
        if self.kind == "f":
            return np.dtype(np.float16 if self.bits == 16 else np.float32)
        return np.dtype(f"{'i' if self.kind == 's' else 'u'}{self.bits // 8}")

    @property
    def elem_bytes(self) -> int:
        return self.bits // 8 * self.channels

    @classmethod
    def of_dtype(cls, dtype, channels: int = 1) -> "Format":
        dt = np.dtype(dtype)
        kind = {"i": "s", "u": "u", "f": "f"}.get(dt.kind)
        if kind is None:
            raise PtxcError(f"texture format not supported: numpy dtype {dt}")
        return cls(kind, dt.itemsize * 8, channels)


@dataclass(eq=False)
class Texture:
    """A texture object. ``memory`` is a uint8 view of the bytes (in place);
    ``dims`` (w, h, d) in elements (h = d = 1 when unused); ``pitch`` bytes
    per row; ``linear`` for a linear-memory (tex1Dfetch) resource."""
    memory: np.ndarray
    fmt: Format
    dims: tuple
    pitch: int
    linear: bool = False
    layered: bool = False          # dims[2] layers of 1-D (dims[1] == 1) or 2-D textures
    cubemap: bool = False          # dims[2] = 6 (x cubemaps when layered) faces of dims[0]^2
    filter: str = "point"
    address: tuple = ("clamp", "clamp", "clamp")
    normalized: bool = False
    read_normalized: bool = False
    border: tuple = (0.0, 0.0, 0.0, 0.0)
    handle: int = field(default=0)

    def returns_float(self) -> bool:
        return self.fmt.kind == "f" or (self.read_normalized and self.fmt.bits < 32)

    def __int__(self) -> int:
        return self.handle


@dataclass(eq=False)
class Surface:
    """A surface object over a CUDA array's bytes (``dims``, ``pitch`` as for
    Texture); a ``layered`` one (layered or cubemap array: dims[2] layers or
    faces) is accessed with ``.a1d``/``.a2d`` (the layer as the third
    coordinate), any other with ``.1d/.2d/.3d``."""
    memory: np.ndarray
    fmt: Format
    dims: tuple
    pitch: int
    layered: bool = False
    handle: int = field(default=0)

    def __int__(self) -> int:
        return self.handle


def register(obj):
    """Give ``obj`` a fresh handle and enter it in the table."""
    with _lock:
        obj.handle = next(_handles)
        REGISTRY[obj.handle] = obj
    texture_native.publish(obj)
    return obj


def destroy(handle: int) -> bool:
    texture_native.withdraw(int(handle))
    with _lock:
        return REGISTRY.pop(int(handle), None) is not None


def check_filter(tex: Texture) -> None:
    if tex.filter not in FILTERS or any(a not in ADDRESS for a in tex.address):
        raise PtxcError(f"texture: filter {tex.filter!r} / address {tex.address!r} not supported "
                        f"(filters {FILTERS}, address modes {ADDRESS})")
    if tex.filter == "linear" and not tex.returns_float():
        raise PtxcError("texture: linear filtering needs a float result (a float format, or "
                        "8/16-bit integers read as normalized floats)")
    if tex.linear and tex.filter == "linear":
        raise PtxcError("texture: linear memory (tex1Dfetch) has no filtering")


# ------------------------------------------------------------ Python API
def texture(array: np.ndarray, filter: str = "point", address="clamp", normalized: bool = False,
            read: str = "element", channels: int = 1, linear: bool = False,
            layered: bool = False, border=(0.0, 0.0, 0.0, 0.0), cubemap: bool = False) -> Texture:
    """A texture over numpy ``array`` (used in place) for standalone launches.

    ``array`` has shape (w,), (h, w) or (d, h, w), plus a last axis of
    ``channels`` (2 or 4) values per texel; with ``layered=True`` the first
    axis is the layer: (layers, w) or (layers, h, w); with ``cubemap=True``
    it is the face: (6, w, w), or (6 n, w, w) for n cubemaps with
    ``layered=True`` too. ``address`` is one mode or one per dimension;
    ``read`` is 'element' or 'normalized'; ``linear=True`` makes a
    linear-memory texture (tex1Dfetch: 1-D, integer index)."""
    a = array if array.flags.c_contiguous else np.ascontiguousarray(array)
    shape = a.shape[:-1] if channels > 1 else a.shape
    if channels > 1 and a.shape[-1] != channels:
        raise PtxcError(f"texture: last axis {a.shape[-1]} is not the {channels} channels")
    if cubemap:
        check_cube_shape(shape, layered)
    if not 1 <= len(shape) - layered <= 3 - layered:
        raise PtxcError(f"texture: array of shape {a.shape} is not a 1-, 2- or 3-D texture "
                        f"{'(layers first) ' if layered else ''}")
    if read not in ("element", "normalized"):
        raise PtxcError(f"texture: read must be 'element' or 'normalized', not {read!r}")
    fmt = Format.of_dtype(a.dtype, channels)
    dims = layer_dims(shape) if (layered or cubemap) else \
        tuple(reversed(shape)) + (1,) * (3 - len(shape))
    modes = (address,) * 3 if isinstance(address, str) else tuple(address) + ("clamp",) * (3 - len(address))
    tex = Texture(a.reshape(-1).view(np.uint8), fmt, dims, dims[0] * fmt.elem_bytes, linear=linear,
                  layered=layered, cubemap=cubemap, filter=filter, address=modes,
                  normalized=normalized, read_normalized=(read == "normalized"), border=tuple(border))
    check_filter(tex)
    tex.keepalive = a
    return register(tex)


def layer_dims(shape: tuple) -> tuple:
    """(w, h, layers) of a layers-first shape (layers, w) or (layers, h, w)."""
    inner = tuple(reversed(shape[1:])) + (1,) * (3 - len(shape))
    return inner[:2] + (shape[0],)


def check_cube_shape(shape: tuple, layered: bool) -> None:
    """A cubemap is (6, w, w) (CUDA: width == height, depth 6); a layered
    one (6 n, w, w), n >= 1 (depth a multiple of 6)."""
    ok = len(shape) == 3 and shape[1] == shape[2] > 0 and shape[0] > 0 and \
        (shape[0] % 6 == 0 if layered else shape[0] == 6)
    if not ok:
        want = "(6 n, w, w)" if layered else "(6, w, w)"
        raise PtxcError(f"texture: a {'layered ' if layered else ''}cubemap needs shape {want} "
                        f"(faces first, square faces), not {shape}")


def surface(array: np.ndarray, channels: int = 1, layered: bool = False) -> Surface:
    """A surface over numpy ``array`` (shape (w,) or (h, w) [+ channels];
    with ``layered=True`` (layers, w) or (layers, h, w): a layered or cubemap
    surface for surf1DLayered/surf2DLayered/surfCubemap*), in place."""
    if not array.flags.c_contiguous:
        raise PtxcError("surface: the array must be C-contiguous (it is written in place)")
    shape = array.shape[:-1] if channels > 1 else array.shape
    if layered and len(shape) not in (2, 3):
        raise PtxcError(f"surface: a layered surface has shape (layers, w) or (layers, h, w), "
                        f"not {array.shape}")
    fmt = Format.of_dtype(array.dtype, channels)
    dims = layer_dims(shape) if layered else tuple(reversed(shape)) + (1,) * (3 - len(shape))
    s = Surface(array.reshape(-1).view(np.uint8), fmt, dims, dims[0] * fmt.elem_bytes,
                layered=layered)
    s.keepalive = array
    return register(s)


def lookup(handle: int, want):
    obj = REGISTRY.get(int(handle))
    if not isinstance(obj, want):
        what = "texture" if want is Texture else "surface"
        other = " (it is a surface)" if isinstance(obj, Surface) else \
            " (it is a texture)" if isinstance(obj, Texture) else ""
        raise TextureError(f"invalid {what} object handle {int(handle)}{other}")
    return obj


# ------------------------------------------------------------ texel reads
def texels(tex, ix, iy, iz) -> np.ndarray:
    """(n, channels) float64 or int64 texel values at integer indices (in range)."""
    fmt = tex.fmt
    off = iz * (tex.pitch * tex.dims[1]) + iy * tex.pitch + ix * fmt.elem_bytes
    n = len(ix)
    idx = off[:, None] + np.arange(fmt.elem_bytes)[None, :]
    raw = tex.memory[idx.reshape(-1)].reshape(n, fmt.elem_bytes)
    return np.ascontiguousarray(raw).view(fmt.dtype).reshape(n, fmt.channels)


def convert(tex: Texture, vals: np.ndarray) -> np.ndarray:
    """Texel values as the read mode returns them (float64 or int64)."""
    fmt = tex.fmt
    if fmt.kind == "f":
        return vals.astype(np.float32).astype(np.float64)
    if tex.read_normalized and fmt.bits < 32:
        if fmt.kind == "u":
            return vals.astype(np.float64) / float((1 << fmt.bits) - 1)
        return np.maximum(vals.astype(np.float64) / float((1 << (fmt.bits - 1)) - 1), -1.0)
    return vals.astype(np.int64)


def wrap_index(i: np.ndarray, n: int, mode: str):
    """(index in range, inside?) of integer texel indices under ``mode``."""
    if mode == "wrap":
        return np.mod(i, n), np.ones(len(i), bool)
    if mode == "mirror":
        m = np.mod(i, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m), np.ones(len(i), bool)
    inside = (i >= 0) & (i < n)
    return np.clip(i, 0, n - 1), inside if mode == "border" else np.ones(len(i), bool)


def modes(tex: Texture) -> tuple:
    """Effective address modes: wrap/mirror need normalized coordinates."""
    if tex.normalized:
        return tex.address
    return tuple("clamp" if m in ("wrap", "mirror") else m for m in tex.address)


def read_at(tex, idx: list) -> np.ndarray:
    """Converted texels at integer indices ``idx`` (one array per dimension,
    address modes applied); border texels read the border colour (0)."""
    n = len(idx[0])
    dims = len(idx)
    ms = modes(tex)
    fixed, ok = [], np.ones(n, bool)
    for d in range(3):
        if d < dims:
            i, inside = wrap_index(idx[d], tex.dims[d], ms[d])
            ok &= inside
        else:
            i = np.zeros(n, np.int64)
        fixed.append(i)
    vals = convert(tex, texels(tex, *fixed))
    if not ok.all():
        border = np.array(tex.border[:tex.fmt.channels], vals.dtype) if vals.dtype.kind == "f" \
            else np.zeros(tex.fmt.channels, vals.dtype)
        vals = np.where(ok[:, None], vals, border[None, :])
    return vals


def scaled(tex, coords: list) -> list:
    """Float32 texel-space coordinates (normalized ones times the size)."""
    out = []
    for d, c in enumerate(coords):
        c = np.asarray(c, np.float32)
        out.append(c * np.float32(tex.dims[d]) if tex.normalized else c)
    return out


def weight(frac: np.ndarray) -> np.ndarray:
    """The 9-bit fixed-point weight (8 fractional bits) of a fraction: nearest, ties up."""
    return np.floor(frac.astype(np.float64) * 256.0 + 0.5) / 256.0


def sample(tex: Texture, coords: list, integer: bool) -> np.ndarray:
    """(n, channels) values of a texture fetch at ``coords`` (one array per
    dimension): float coordinates are filtered, integer ones index texels."""
    if tex.linear:
        if not integer:
            raise TextureError(f"texture object {tex.handle} is linear memory: it needs integer "
                               "coordinates (tex1Dfetch); tex1D with float coordinates is not defined")
        i = np.asarray(coords[0], np.int64)
        inside = (i >= 0) & (i < tex.dims[0])
        vals = convert(tex, texels(tex, np.where(inside, i, 0), np.zeros_like(i), np.zeros_like(i)))
        return np.where(inside[:, None], vals, 0)
    if integer:
        return read_at(tex, [np.asarray(c, np.int64) for c in coords])
    xs = scaled(tex, coords)
    if tex.filter == "point":
        return read_at(tex, [np.floor(x).astype(np.int64) for x in xs])
    base, alphas = [], []
    for x in xs:
        xb = x - np.float32(0.5)
        fl = np.floor(xb)
        base.append(fl.astype(np.int64))
        alphas.append(weight(xb - fl))
    total = 0.0
    for corner in itertools.product((0, 1), repeat=len(xs)):
        w = np.ones(len(xs[0]))
        for a, bit in zip(alphas, corner):
            w = w * (a if bit else 1.0 - a)
        total = total + w[:, None] * read_at(tex, [b + bit for b, bit in zip(base, corner)])
    return total


def gather(tex: Texture, coords: list, comp: int) -> np.ndarray:
    """tld4: (n, 4) component ``comp`` of the 2x2 bilinear footprint in the
    order (i, j+1), (i+1, j+1), (i+1, j), (i, j) (counter-clockwise from lower left)."""
    if tex.linear or len(coords) != 2:
        raise TextureError(f"tld4 needs a 2-D array texture (texture object {tex.handle})")
    if comp >= tex.fmt.channels:
        raise TextureError(f"tld4 component {'rgba'[comp]} of a {tex.fmt.channels}-channel texture")
    xs = scaled(tex, coords)
    i = np.floor(xs[0] - np.float32(0.5)).astype(np.int64)
    j = np.floor(xs[1] - np.float32(0.5)).astype(np.int64)
    order = ((0, 1), (1, 1), (1, 0), (0, 0))
    return np.stack([read_at(tex, [i + a, j + b])[:, comp] for a, b in order], axis=1)


# ------------------------------------------------------------ surfaces
def surface_index(surf: Surface, coords: list, nbytes: int, mode: str):
    """(byte offsets, inside?) of surface coordinates (x in bytes)."""
    x = np.asarray(coords[0], np.int64)
    rows = [np.asarray(c, np.int64) for c in coords[1:]]
    width = surf.dims[0] * surf.fmt.elem_bytes
    lims = [width - nbytes] + [surf.dims[1 + k] - 1 for k in range(len(rows))]
    parts = [x] + rows
    inside = np.ones(len(x), bool)
    for k, p in enumerate(parts):
        inside &= (p >= 0) & (p <= lims[k])
        if mode == "clamp":
            parts[k] = np.clip(p, 0, lims[k]) if k else np.clip(p // nbytes * nbytes, 0, lims[0])
    off = parts[0] + (parts[1] * surf.pitch if len(parts) > 1 else 0)
    if len(parts) > 2:
        off = off + parts[2] * surf.pitch * surf.dims[1]
    if mode == "clamp":
        inside[:] = True
    return np.where(inside, off, 0), inside


def surface_load(surf: Surface, coords: list, nbytes: int, mode: str):
    """(n, nbytes) uint8 rows, bad lanes (trap) as a bool array."""
    off, inside = surface_index(surf, coords, nbytes, mode)
    idx = off[:, None] + np.arange(nbytes)[None, :]
    raw = surf.memory[idx.reshape(-1)].reshape(len(off), nbytes)
    raw = np.where(inside[:, None], raw, 0)
    return raw, (~inside if mode == "trap" else np.zeros(len(off), bool))


def surface_store(surf: Surface, coords: list, data: np.ndarray, mode: str) -> np.ndarray:
    """Write (n, nbytes) uint8 rows in lane order; the bad lanes (trap)."""
    nbytes = data.shape[1]
    off, inside = surface_index(surf, coords, nbytes, mode)
    if mode == "trap" and not inside.all():
        return ~inside
    for k in np.nonzero(inside)[0]:
        surf.memory[off[k]:off[k] + nbytes] = data[k]
    return np.zeros(len(off), bool)
