"""Texture and surface objects of an application (cudaCreateTextureObject,
cudaCreateSurfaceObject): the ptxc side of OP_TEXTURE_CREATE/DESTROY.

The shim sends the resource and texture descriptions (native/texture.c,
``describe``); this module checks them, makes a texture_objects.Texture or
Surface over a view of the allocation's memory (used in place: kernels see
what the application copied into the array, and surface writes are in the
application's memory at once) and answers the handle. CUDA enums
(driver_types.h / texture_types.h): cudaResourceType array 0, linear 2,
pitch2D 3; cudaTextureAddressMode wrap 0, clamp 1, mirror 2, border 3;
cudaTextureFilterMode point 0, linear 1; cudaTextureReadMode element 0,
normalized float 1; cudaChannelFormatKind signed 0, unsigned 1, float 2.
An array made with cudaArrayLayered and/or cudaArrayCubemap (the request
carries the array's flags) gives a layered and/or cubemap texture (dims
(w, max(h, 1), layers or faces)) and a layered surface (faces are layers:
surfCubemap* compile to the .a2d surface instructions).
"""
from __future__ import annotations

import struct

from ptxc.backends.llvm.ops import texture_objects as T
from ptxc.errors import PtxcError

from . import protocol as P

CREATE = struct.Struct("<IIQQQQQ5i3iiii4fIi")   # 116 bytes
RES_ARRAY, RES_LINEAR, RES_PITCH2D = 0, 2, 3
ARRAY_LAYERED, ARRAY_CUBEMAP = 0x01, 0x04           # cudaArrayLayered, cudaArrayCubemap
ERR_INVALID_VALUE = 1
SHIFT = 32


def channel_format(x, y, z, w, f) -> T.Format:
    chans = [c for c in (x, y, z, w) if c]
    if f not in (0, 1, 2) or len(chans) not in (1, 2, 4) or len(set(chans)) != 1:
        raise PtxcError(f"texture format not supported: channels ({x}, {y}, {z}, {w}) kind {f}")
    return T.Format(T.KINDS[f], chans[0], len(chans))


def memory_view(devmem, addr: int, nbytes: int):
    """The uint8 view of ``nbytes`` device bytes at ``addr`` (None if out of an allocation)."""
    a = devmem.by_seg.get(addr >> SHIFT)
    off = addr & ((1 << SHIFT) - 1)
    if a is None or a.array is None or off + nbytes > a.size:
        return None
    return a.array[off:off + nbytes]


def build(devmem, fields):
    (surface, res, dev, w, h, d, pitch, x, y, z, cw, f, a0, a1, a2, filt, read, norm,
     *border, flags, seamless) = fields
    border = border[:4]
    fmt = channel_format(x, y, z, cw, f)
    if res == RES_LINEAR:
        w = pitch // fmt.elem_bytes             # pitch = sizeInBytes
    h1, d1 = max(h, 1), max(d, 1)
    mem = memory_view(devmem, dev, pitch * h1 * d1 if pitch else 0)
    if mem is None or w == 0 or (res == RES_PITCH2D and pitch < w * fmt.elem_bytes):
        return None
    dims = (w, h1, d1)
    layered, cubemap = bool(flags & ARRAY_LAYERED), bool(flags & ARRAY_CUBEMAP)
    if surface:
        return T.Surface(mem, fmt, dims, pitch, layered=layered or cubemap)
    if cubemap and seamless:
        raise PtxcError("cudaTextureDesc.seamlessCubemap (filtering across cubemap faces) is not "
                        "supported yet")
    modes = tuple(T.ADDRESS[m] if 0 <= m < 4 else "?" for m in (a0, a1, a2))
    tex = T.Texture(mem, fmt, dims, pitch, linear=(res == RES_LINEAR), layered=layered,
                    cubemap=cubemap,
                    filter=T.FILTERS[filt] if filt in (0, 1) else "?", address=modes,
                    normalized=bool(norm), read_normalized=bool(read), border=tuple(border))
    T.check_filter(tex)
    return tex


def create(session, payload: bytes) -> None:
    """OP_TEXTURE_CREATE: reply the u64 handle, or cudaErrorInvalidValue."""
    try:
        obj = build(session.devmem, CREATE.unpack_from(payload))
    except PtxcError as e:
        session.stop(PtxcError(f"cudaCreateTextureObject: {e.message}"))
        return
    if obj is None:
        session.channel.reply(ERR_INVALID_VALUE, b"")
        return
    T.register(obj)
    session.channel.reply(0, struct.pack("<Q", obj.handle))


def destroy(session, payload: bytes) -> None:
    handle, = struct.unpack_from("<Q", payload)
    session.channel.reply(0 if T.destroy(handle) else ERR_INVALID_VALUE, b"")


def handlers(session) -> dict:
    return {P.OP_TEXTURE_CREATE: lambda p: create(session, p),
            P.OP_TEXTURE_DESTROY: lambda p: destroy(session, p)}
