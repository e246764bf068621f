"""Decoding the fat binary an application embeds (nvcc's ``.nv_fatbin``).

A fat binary container is a 16-byte header ``{u32 magic 0xBA55ED50, u16
version 1, u16 header size, u64 size of the entries}`` followed by entries.
Every entry starts with a header (sizes and flags little-endian):

====== ==== ===========================================================
offset size meaning
====== ==== ===========================================================
0      u16  kind: 1 PTX, 2 ELF (SASS cubin)
2      u16  version
4      u32  size of this entry header (the payload follows it)
8      u64  payload size (padded)
16     u32  compressed size (when compressed)
28     u32  sm / compute architecture (90 = sm_90 / compute_90)
40     u64  flags: 0x2000 = LZ4 block compression (``-compress-mode=speed``),
            0x8000 = a zstd frame (nvcc 13's default for PTX)
56     u64  uncompressed size (when compressed)
====== ==== ===========================================================

(The numbers were read off fat binaries made by nvcc 13 with
``-compress-mode=none|speed|default|size``; the test data in
tests/runtime_data/ are such files.) PTX payloads are text padded with NULs.
zstd frames are decoded with the ``zstandard`` package (the standard library
has zstd only from Python 3.14; a zstd decoder is far more work than LZ4's).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ptxc.errors import PtxcError

from .lz4 import LZ4Error, decompress_block

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_ELF = 2
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000


@dataclass
class Entry:
    kind: int              # KIND_PTX or KIND_ELF
    arch: int              # e.g. 90
    flags: int
    payload: bytes         # as stored (maybe compressed)
    size: int              # uncompressed size (0: not recorded)

    @property
    def compression(self) -> str:
        if self.flags & FLAG_ZSTD:
            return "zstd"
        if self.flags & FLAG_LZ4:
            return "lz4"
        return "none"

    def data(self) -> bytes:
        """The uncompressed payload."""
        if self.flags & FLAG_ZSTD:
            return _zstd(self.payload, self.size)
        if self.flags & FLAG_LZ4:
            try:
                return decompress_block(self.payload, self.size or None)
            except LZ4Error as e:
                raise PtxcError(f"fat binary: corrupt LZ4-compressed entry: {e}")
        return self.payload

    def text(self) -> str:
        """The PTX text of a PTX entry."""
        return self.data().split(b"\0", 1)[0].decode("utf-8", errors="replace")


def _zstd(payload: bytes, size: int) -> bytes:
    try:
        import zstandard
    except ImportError:                             # pragma: no cover (a dependency)
        raise PtxcError("fat binary: a zstd-compressed entry needs the 'zstandard' package")
    try:
        return zstandard.ZstdDecompressor().decompress(payload, max_output_size=max(size, 1 << 26))
    except zstandard.ZstdError as e:
        raise PtxcError(f"fat binary: corrupt zstd-compressed entry: {e}")


def parse(blob: bytes, what: str = "fat binary") -> list[Entry]:
    """The entries of the container(s) in ``blob`` (containers may follow
    each other)."""
    entries = []
    pos = 0
    while pos + 16 <= len(blob):
        magic, _version, hsize, fsize = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            if pos == 0:
                raise PtxcError(f"{what}: not a fat binary (magic 0x{magic:08x})")
            break
        end = pos + hsize + fsize
        if end > len(blob):
            raise PtxcError(f"{what}: truncated fat binary ({len(blob) - pos} of {hsize + fsize} bytes)")
        entries += _entries(blob, pos + hsize, end, what)
        pos = end
    return entries


def containers(section: bytes) -> list[bytes]:
    """The fat binary containers of an executable's ``.nv_fatbin`` section
    (one per .cu file, each starting at an 8-byte boundary, zero padding
    between them)."""
    out, pos = [], 0
    while pos + 16 <= len(section):
        magic, _version, hsize, fsize = struct.unpack_from("<IHHQ", section, pos)
        if magic == FATBIN_MAGIC and hsize >= 16:
            end = min(pos + hsize + fsize, len(section))
            out.append(section[pos:end])
            pos = (end + 7) // 8 * 8
        else:
            pos += 8
    return out


def _entries(blob: bytes, pos: int, end: int, what: str) -> list[Entry]:
    out = []
    while pos + 16 <= end:
        kind, _ver, ehsize, psize = struct.unpack_from("<HHIQ", blob, pos)
        if ehsize < 64 or pos + ehsize + psize > end:
            raise PtxcError(f"{what}: malformed fat binary entry at byte {pos}")
        csize, = struct.unpack_from("<I", blob, pos + 16)
        arch, = struct.unpack_from("<I", blob, pos + 28)
        flags, = struct.unpack_from("<Q", blob, pos + 40)
        usize, = struct.unpack_from("<Q", blob, pos + 56)
        body = blob[pos + ehsize:pos + ehsize + psize]
        if flags & (FLAG_LZ4 | FLAG_ZSTD) and 0 < csize <= psize:
            body = body[:csize]
        out.append(Entry(kind, arch, flags, body, usize))
        pos += ehsize + psize
    return out


def ptx_entries(entries: list[Entry]) -> list[Entry]:
    return [e for e in entries if e.kind == KIND_PTX]


def choose_ptx(entries: list[Entry], sm: int, what: str = "fat binary") -> Entry:
    """The PTX entry of the highest architecture that a GPU of compute
    capability ``sm`` (e.g. 90) can run; a clear error when there is none."""
    ptx = ptx_entries(entries)
    if not ptx:
        archs = ", ".join(f"sm_{e.arch}" for e in entries if e.kind == KIND_ELF) or "none"
        raise PtxcError(f"{what} has no PTX (only SASS for {archs}); ptxc runs PTX: rebuild with "
                        f"-arch=sm_XX (which embeds compute_XX PTX) or add "
                        f"-gencode arch=compute_XX,code=compute_XX, or pass the PTX with --ptx FILE")
    usable = [e for e in ptx if e.arch <= sm]
    if not usable:
        have = ", ".join(f"compute_{e.arch}" for e in ptx)
        raise PtxcError(f"{what} has PTX for {have} only; the chosen GPU is sm_{sm} "
                        f"(choose another with --gpu, or pass --ptx FILE)")
    return max(usable, key=lambda e: e.arch)
