"""The PTX of an image the driver API loads (cuModuleLoadData, cuLibraryLoadData,
cuLinkComplete's output), or a one-line reason why there is none.

An image is one of (CUDA Driver API reference, "Module Management"):

* PTX text (NUL-ended);
* a fat binary (fatbin.py): its PTX entry for the ``--gpu`` model;
* an ELF cubin: SASS only, which ptxc cannot run: its PTX when the program
  compiled it under ``ptxc run`` with Triton (cubin_ptx.py), else the error
  says how to load PTX instead;
* the image of ptxc's cuLinkComplete (native/drv_link.c): ``PTXCLNK\\0``,
  u64 size, u32 count, u32 0, then count x {u32 CUjitInputType, u32 name
  bytes, u64 data bytes, name, data}; each input is decoded as above, and
  libcudadevrt (SASS) is replaced by ptxc's PTX of the functions numba
  calls (cudadevrt_ptx.py).

Each returned PTX is a (name, text) pair; several are linked by ptx_link.py.
"""
from __future__ import annotations

import struct

from ptxc.errors import PtxcError

from . import fatbin

LINKED_MAGIC = b"PTXCLNK\0"
JIT_CUBIN, JIT_PTX, JIT_FATBINARY, JIT_OBJECT, JIT_LIBRARY = range(5)
# CUresult values of a failed load
CUDA_ERROR_INVALID_IMAGE = 200
CUDA_ERROR_NO_BINARY_FOR_GPU = 209
CUDA_ERROR_INVALID_PTX = 218

SASS_HINT = ("ptxc runs PTX, not SASS: load PTX instead (NVRTC: -arch=compute_XX and "
             "nvrtcGetPTX; cuda.core: Program.compile('ptx'); numba, Triton: run it under ptxc "
             "run, which keeps the PTX)")


class ImageError(PtxcError):
    """An image without usable PTX: ``code`` is the CUresult to return."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def ptx_of(image: bytes, sm: int, what: str = "the image",
           store: str | None = None) -> list[tuple[str, str]]:
    """The (name, PTX text) pairs an image carries (``store``: the run's PTX
    of cubins, cubin_ptx.py)."""
    if image.startswith(LINKED_MAGIC):
        return _linked(image, sm, store)
    if image[:4] == struct.pack("<I", fatbin.FATBIN_MAGIC):
        return [(what, _fatbin_ptx(image, sm, what))]
    if image.startswith(b"\x7fELF"):
        return [(what, _cubin_ptx(image, what, store))]
    text = image.split(b"\0", 1)[0].decode("utf-8", errors="replace")
    if ".entry" not in text and ".version" not in text:
        raise ImageError(f"{what} is neither PTX, a fat binary nor a cubin", CUDA_ERROR_INVALID_IMAGE)
    return [(what, text)]


def _fatbin_ptx(blob: bytes, sm: int, what: str) -> str:
    try:
        entries = fatbin.parse(blob, what)
        return fatbin.choose_ptx(entries, sm, what).text()
    except ImageError:
        raise
    except PtxcError as e:
        raise ImageError(e.message, CUDA_ERROR_NO_BINARY_FOR_GPU)


def _cubin_ptx(blob: bytes, what: str, store: str | None) -> str:
    from .cubin_ptx import lookup
    text = lookup(blob, store)        # Triton's cubins: the PTX ptxas compiled
    if text is not None:
        return text
    raise ImageError(f"{what} is a cubin without PTX (SASS only); {SASS_HINT}",
                     CUDA_ERROR_NO_BINARY_FOR_GPU)


def _linked(image: bytes, sm: int, store: str | None) -> list[tuple[str, str]]:
    total, count, _ = struct.unpack_from("<QII", image, 8)
    pos, out = 24, []
    for i in range(count):
        kind, nlen, size = struct.unpack_from("<IIQ", image, pos)
        name = image[pos + 16:pos + 16 + nlen].decode("utf-8", "replace") or f"input {i + 1}"
        data = image[pos + 16 + nlen:pos + 16 + nlen + size]
        pos += 16 + nlen + size
        if kind in (JIT_OBJECT, JIT_LIBRARY) and _is_device_runtime(name):
            from .cudadevrt_ptx import PTX
            out.append((name, PTX))   # libcudadevrt (SASS): ptxc's PTX of what numba calls
            continue
        if kind in (JIT_OBJECT, JIT_LIBRARY):
            raise ImageError(f"cuLinkAddData: {name} is a host object or library, which ptxc "
                             f"cannot link (it links PTX)", CUDA_ERROR_INVALID_IMAGE)
        out += ptx_of(data, sm, name, store)
    return out


def _is_device_runtime(name: str) -> bool:
    return "cudadevrt" in name
