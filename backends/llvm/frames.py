"""The native stack a compiled kernel needs: its functions' frame sizes,
read from the object code LLVM emitted.

A fully unrolled kernel (a wmma GEMM tile with hundreds of ``mma``) gets a
``run_warp`` whose frame holds every spilled 32-lane value: megabytes or
more, beyond the 8 MiB a thread gets by default (the overflow killed the
ptxc process with SIGSEGV, issue 29). The executor threads are therefore
made with a stack sized for the code (stacks.py), from this measurement.

LLVM can record frame sizes in a ``.stack_sizes`` section
(``-stack-size-section``), but llvmlite exposes no TargetOptions to turn it
on; so the frame is read from each function's prologue instead, as a
debugger's unwinder would: the function symbols of the ELF object
(``.symtab``, System V gABI) give each function's bytes, and the x86-64
prologue allocates the frame with ``sub rsp, imm32`` (``48 81 EC``),
``sub rsp, imm8`` (``48 83 EC``), or, beyond 2 GiB, ``movabs rax, imm64;
sub rsp, rax`` (``48 B8``, ``48 29 C4``), after at most six register pushes
and a realignment (``and rsp, -align``). The native code has no recursion
(recursive PTX uses the call stacks in memory of ops/call_frames.py), so a
call chain enters each function at most once and the sum of the frames of
an object bounds the stack any of its kernels can use; an object of many
kernels (a batch, jit.compile_many) bounds each kernel by its own frame plus
those of the helpers (every function not named ``run_warp_*``: a kernel
never calls another kernel's ``run_warp``). On another
architecture (or an object that is not ELF64) the size is unknown (None)
and stacks.py reserves its default.
"""
from __future__ import annotations

import platform
import struct

PROLOGUE_BYTES = 96         # a prologue's frame allocation lies within this many bytes
SLACK = 6 * 8 + 8 + 256 + 128   # pushes, the return address, a realignment (up to 256
                                # bytes) and the System V red zone (128 bytes a leaf uses
                                # below rsp without moving it)
KERNEL_PREFIX = "run_warp_"   # jit.py names each kernel's function run_warp_KEY


def object_frames(obj: bytes) -> dict | None:
    """{function name defined in ``obj``: the native stack bytes a call of
    it may use} (module doc), or None when ``obj`` cannot be read (not
    x86-64 ELF64)."""
    if platform.machine().lower() not in ("x86_64", "amd64") or obj[:5] != b"\x7fELF\x02":
        return None
    try:
        frames = {name: prologue_frame(obj[off:off + min(size, PROLOGUE_BYTES)]) + SLACK
                  for name, off, size in _functions(obj)}
    except (struct.error, IndexError, ValueError):
        return None
    helpers = sum(v for k, v in frames.items() if not k.startswith(KERNEL_PREFIX))
    return {k: (v + helpers if k.startswith(KERNEL_PREFIX) else v) for k, v in frames.items()}


def prologue_frame(code: bytes) -> int:
    """The bytes one x86-64 prologue subtracts from rsp (0 if none found)."""
    i = 0
    while i < len(code) - 3:
        if code[i:i + 3] == b"\x48\x81\xec" and i + 7 <= len(code):
            return struct.unpack_from("<I", code, i + 3)[0]
        if code[i:i + 3] == b"\x48\x83\xec" and i + 4 <= len(code):
            return code[i + 3]
        if code[i:i + 2] == b"\x48\xb8" and code[i + 10:i + 13] == b"\x48\x29\xc4":
            return struct.unpack_from("<Q", code, i + 2)[0]
        i += 1
    return 0


def _sections(obj: bytes) -> list:
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    return [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + k * shentsize) for k in range(shnum)]


def _functions(obj: bytes):
    """(name, file offset, size) of every STT_FUNC symbol with a body."""
    secs = _sections(obj)
    for sh in secs:
        if sh[1] != 2:                           # SHT_SYMTAB
            continue
        strtab = secs[sh[6]]                     # sh_link: its string table
        for k in range(sh[5] // 24):             # Elf64_Sym: 24 bytes
            st_name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", obj, sh[4] + 24 * k)
            if info & 0xF != 2 or size == 0 or not 0 < shndx < len(secs):   # STT_FUNC
                continue
            end = obj.index(b"\0", strtab[4] + st_name)
            yield obj[strtab[4] + st_name:end].decode(), secs[shndx][4] + value, size
