"""A one-line hint for a file that is not PTX (docs/user-guide.md, "Input").

Told by its content, not its name: an ELF file (``\\x7fELF``: an executable
or shared library for ``ptxc run``, a cubin, an object file), a CUDA fat
binary, other binary data (a NUL byte), CUDA or C++ source (a ``#include``
or other preprocessor line, or ``__global__``). ``binary_hint`` runs before
the bytes are decoded; ``source_hint`` only when the text failed to parse,
so a PTX file is never refused for what its comments hold.
"""
from __future__ import annotations

import os
import re

ELF_MAGIC = b"\x7fELF"
FATBIN_MAGICS = (b"\x50\xed\x55\xba", b"\xb1\x43\x62\x46")   # fat binary; its .nv_fatbin wrapper
EM_CUDA = 190
ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
_PREPROCESSOR = re.compile(r"^\s*#\s*(include|define|if|ifdef|ifndef|pragma)\b", re.M)


def _ptx_name(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0] if path != "<stdin>" else "kernel"
    return stem + ".ptx"


def _cu_name(path: str) -> str:
    return path if path != "<stdin>" else "kernel.cu"


def binary_hint(data: bytes, path: str) -> str | None:
    """The hint for binary input (ELF, fat binary, NUL bytes), else None."""
    if data.startswith(ELF_MAGIC) and len(data) >= 20 and data[4] in (1, 2) and \
            data[5] in (1, 2) and data[6] == 1:        # class, byte order, version 1
        e_type = int.from_bytes(data[16:18], "little" if data[5:6] != b"\x02" else "big")
        e_machine = int.from_bytes(data[18:20], "little" if data[5:6] != b"\x02" else "big")
        if e_machine == EM_CUDA:
            return (f"{path} is a cubin (compiled device code), not PTX: give ptxc the PTX "
                    f"(nvcc -ptx -arch=sm_90 FILE.cu -o {_ptx_name(path)})")
        if e_type == ET_REL:
            return (f"{path} is an object file, not PTX: give ptxc the PTX (nvcc -ptx "
                    f"-arch=sm_90 FILE.cu), or link the application and run it with "
                    f"ptxc run -- ./app")
        run = "./app" if path == "<stdin>" else path if "/" in path else "./" + path
        return f"{path} is an executable, not PTX: run it with ptxc run -- {run}"
    if data[:4] in FATBIN_MAGICS:
        return (f"{path} is a CUDA fat binary, not PTX: give ptxc the PTX (nvcc -ptx "
                f"-arch=sm_90 FILE.cu -o {_ptx_name(path)}), or run the application with "
                f"ptxc run -- ./app")
    nul = data.find(b"\0")
    if nul >= 0:
        return f"{path} is a binary file (a NUL byte at offset {nul}), not PTX text"
    return None


def source_hint(text: str, path: str) -> str | None:
    """The hint for CUDA or C++ source, else None."""
    if _PREPROCESSOR.search(text) or "__global__" in text:
        return (f"{path} is CUDA source, not PTX: compile it with nvcc -ptx -arch=sm_90 "
                f"{_cu_name(path)} -o {_ptx_name(path)}")
    return None


def empty_hint(path: str) -> str:
    return f"empty file: no PTX module (nvcc -ptx -arch=sm_90 FILE.cu -o {_ptx_name(path)} writes one)"
