"""Just enough ELF reading to tell how an executable uses the CUDA runtime:
does it embed a fat binary (section ``.nv_fatbin``), and does it load
libcudart.so dynamically (a DT_NEEDED entry)? An application linked with
nvcc's default ``-cudart static`` has the first and not the second: ptxc
cannot replace its runtime, and says so before running it. A DT_RPATH
(unlike DT_RUNPATH) is searched before LD_LIBRARY_PATH, so one that holds a
real libcudart.so.13 would win over ptxc's.

ELF-64 little-endian only (what nvcc makes on x86-64 and aarch64 Linux);
anything else is "not an ELF executable we know" and is run as it is.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

DT_NEEDED, DT_RPATH, SHT_DYNAMIC, SHT_NOBITS = 1, 15, 6, 8
SHT_SYMTAB, SHT_DYNSYM, STT_FUNC = 2, 11, 2


@dataclass
class ElfInfo:
    sections: list
    needed: list
    rpath: list            # DT_RPATH directories: searched before LD_LIBRARY_PATH

    @property
    def has_fatbin(self) -> bool:
        return ".nv_fatbin" in self.sections or ".nvFatBinSegment" in self.sections

    @property
    def dynamic_cudart(self) -> bool:
        return any(n.startswith("libcudart.so") for n in self.needed)


def read(path: str) -> ElfInfo | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    try:
        return _parse(data)
    except (struct.error, IndexError, UnicodeDecodeError):
        return None


def section_bytes(path: str, name: str) -> bytes | None:
    """The contents of section ``name`` of ELF file ``path`` (None: not an
    ELF file we read, or no such section); ``.nv_fatbin`` holds the fat
    binaries nvcc embeds (runtime/fatbin.py)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    try:
        for h, n in zip(*_sections(data)):
            if n == name and h[1] != SHT_NOBITS:
                return data[h[4]:h[4] + h[5]]
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None
    return None


def functions(path: str) -> list[tuple[int, int, str]]:
    """(address, size, name) of the function symbols of ELF file ``path``
    (.symtab, else .dynsym), sorted by address; [] when it has none we can
    read. The leak check names a host call site with them when addr2line
    is not installed."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            return []
        heads, _ = _sections(data)
        out = []
        for kind in (SHT_SYMTAB, SHT_DYNSYM):
            for h in heads:
                if h[1] != kind:
                    continue
                strtab = heads[h[6]]
                for off in range(h[4], h[4] + h[5], 24):
                    name, info, _, _, value, size = struct.unpack_from("<IBBHQQ", data, off)
                    if info & 0xF == STT_FUNC and value:
                        start = strtab[4] + name
                        out.append((value, size, data[start:data.index(b"\0", start)].decode()))
            if out:
                break
        return sorted(out)
    except (struct.error, IndexError, ValueError, UnicodeDecodeError, OSError):
        return []


def _sections(data: bytes):
    """(section headers, section names)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    names = [data[strtab[4] + h[0]:data.index(b"\0", strtab[4] + h[0])].decode() for h in heads]
    return heads, names


def _parse(data: bytes) -> ElfInfo:
    heads, names = _sections(data)

    def name_at(table, off: int) -> str:
        start = table[4] + off
        return data[start:data.index(b"\0", start)].decode()

    needed, rpath = [], []
    for h in heads:
        if h[1] != SHT_DYNAMIC:
            continue
        dynstr = heads[h[6]]                  # sh_link: the string table
        for off in range(h[4], h[4] + h[5], 16):
            tag, val = struct.unpack_from("<qQ", data, off)
            if tag == 0:
                break
            if tag == DT_NEEDED:
                needed.append(name_at(dynstr, val))
            elif tag == DT_RPATH:
                rpath += [d for d in name_at(dynstr, val).split(":") if d]
    return ElfInfo(names, needed, rpath)


STT_FILE = 4


def symbol_files(path: str, section: str) -> dict:
    """{offset in ``section``: source file} of the symbols that lie in
    section ``section`` of ELF file ``path``, each with the file of the
    STT_FILE symbol before it in .symtab (a local symbol follows its file's
    entry: nvcc's ``fatbinData`` in ``__nv_relfatbin`` after ``a.cudafe1.cpp``);
    {} when the file or its .symtab (stripped) cannot tell."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            return {}
        heads, names = _sections(data)
        if section not in names:
            return {}
        shndx = names.index(section)
        base = heads[shndx][3]                      # sh_addr
        out = {}
        for h in heads:
            if h[1] != SHT_SYMTAB:
                continue
            strtab, current = heads[h[6]], None
            for off in range(h[4], h[4] + h[5], 24):
                name, info, _, ndx, value, _ = struct.unpack_from("<IBBHQQ", data, off)
                start = strtab[4] + name
                text = data[start:data.index(b"\0", start)].decode()
                if info & 0xF == STT_FILE:
                    current = text
                elif ndx == shndx and current:
                    out.setdefault(value - base, current)
        return out
    except (struct.error, IndexError, ValueError, UnicodeDecodeError, OSError):
        return {}
