"""Relocatable device code (``nvcc -rdc=true``): the PTX of an nvlink-linked
fat binary, linked here as nvlink links the objects' SASS.

What such an application holds (nvcc 13; ``nvcc --dryrun``, ``-keep`` and
the crt/link.stub header; docs/runtime.md, "Relocatable device code"):

* every object (.cu file compiled with ``-dc``) has its own fat binary in
  section ``__nv_relfatbin``: relocatable SASS and, with ``-arch=sm_XX``,
  the object's PTX, whose ``.extern`` functions and variables other objects
  define;
* nvlink links the objects' SASS (and libcudadevrt's when the program uses
  the device runtime) into one cubin, the only entry of the linked fat
  binary in ``.nv_fatbin``: no PTX;
* the static constructor of every object calls its
  ``__cudaRegisterLinkedBinary_<module id>``; the last one calls
  ``__cudaRegisterFatBinary`` once, with a wrapper of version 2 whose last
  field lists the objects' fat binaries, then every object's registration
  callback (its kernels and variables) on that one handle.

The shim sends those fat binaries after the linked one (native/register.c);
``split`` takes them apart. ``linked_ptx`` links the objects' PTX with
ptx_link.py (nvlink's rules and errors), each object named by its source
file (``a.cu``, from the ELF symbol table: ``object_names``). libcudadevrt's
object, whose only PTX is for compute_121 and calls the driver's system
calls, is replaced by ptxc's PTX of the device runtime (cudadevrt_ptx.py):
its functions are linked when an object references them.
"""
from __future__ import annotations

import os
import re
import struct

from ptxc.errors import PtxcError

from . import elfinfo, fatbin, ptx_link

DEVICE_RUNTIME = b"_cuda_device_runtime_cu_"     # in the module id of libcudadevrt's object
LIBRARY = "libcudadevrt (ptxc's PTX)"
_TEMP = re.compile(r"^tmpxft_[0-9a-f]+_[0-9a-f]+-\d+_")    # nvcc's temporary name for X.cu


def split(blob: bytes) -> tuple[bytes, list[bytes]]:
    """The linked fat binary and the objects' fat binaries that follow it."""
    parts, pos = [], 0
    while pos + 16 <= len(blob):
        magic, _, hsize, fsize = struct.unpack_from("<IHHQ", blob, pos)
        if magic != fatbin.FATBIN_MAGIC:
            break
        parts.append(blob[pos:pos + hsize + fsize])
        pos += hsize + fsize
    if not parts:
        return blob, []
    return parts[0], parts[1:]


def object_names(path: str | None, objects: list[bytes]) -> list[str]:
    """The source file of each object (``a.cu``), found where its fat
    binary lies in ``path``'s ``__nv_relfatbin`` section; ``object N`` when
    the file does not tell (stripped, or not found)."""
    section = elfinfo.section_bytes(path, "__nv_relfatbin") if path else None
    files = elfinfo.symbol_files(path, "__nv_relfatbin") if section else {}
    names = []
    for i, blob in enumerate(objects):
        at = section.find(blob) if section else -1
        name = files.get(at)
        if name and name.endswith(".cudafe1.cpp"):
            name = _TEMP.sub("", os.path.basename(name)[:-len(".cudafe1.cpp")]) + ".cu"
        names.append(os.path.basename(name) if name else f"object {i + 1} of {len(objects)}")
    return names


def is_device_runtime(entries: list[fatbin.Entry]) -> bool:
    """libcudadevrt's object (its kernels' names carry its module id)."""
    for e in entries:
        if e.kind == fatbin.KIND_PTX:
            return DEVICE_RUNTIME.decode() in e.text()
    return any(DEVICE_RUNTIME in e.data() for e in entries[:1])


def linked_ptx(objects: list[bytes], names: list[str], sm: int, what: str) -> str:
    """One PTX module from the objects' PTX and the device runtime's."""
    inputs = []
    for blob, name in zip(objects, names):
        entries = fatbin.parse(blob, f"{what}, object {name}")
        if is_device_runtime(entries):
            continue
        if not fatbin.ptx_entries(entries):
            archs = ", ".join(f"sm_{e.arch}" for e in entries if e.kind == fatbin.KIND_ELF)
            raise PtxcError(f"{name} has no PTX (only SASS for {archs or 'no architecture'}), "
                            f"and ptxc links and runs the PTX of relocatable device code "
                            f"({what}): build it with -arch=sm_XX (which embeds compute_XX "
                            f"PTX) or add -gencode arch=compute_XX,code=compute_XX")
        entry = fatbin.choose_ptx(entries, sm, f"{name} ({what})")
        inputs.append((name, entry.text()))
    if not inputs:
        raise PtxcError(f"{what} was linked from relocatable device code whose objects hold "
                        f"no PTX of the application")
    from .cudadevrt_ptx import PTX
    try:
        return ptx_link.link(inputs, library=[(LIBRARY, PTX)], strict=True)
    except PtxcError as e:
        raise PtxcError(f"{e.message} ({what}, linked from relocatable device code by ptxc "
                        f"as nvlink does: docs/runtime.md)")
