"""``ptxc check --leak-check full``: the device allocations the application
never freed, in compute-sanitizer's words (CUDA Compute Sanitizer
documentation, "Leak Checking" and "Understanding Memcheck Errors":
"Leaked 64 bytes at 0x400200200", then ``LEAK SUMMARY: N bytes leaked in M
allocations``; each leak is one error).

A leak is an allocation of cudaMalloc (and cudaMallocPitch, cudaMalloc3D,
cudaMallocAsync) or cudaMallocManaged still live when the application
ends: compute-sanitizer checks when the CUDA context is destroyed (at exit
or cudaDeviceReset), ptxc at exit. Pinned host memory (cudaMallocHost),
module variables and the device heap are not device allocations of the
application (device-heap blocks that kernels malloc'ed and never freed are
not reported).

Where it was made: under ``ptxc check`` the shim sends the return
addresses of the application's frames with each allocation (native/
memory.c, alloc_site; runtime/checks.parse_site). They are named here with
``addr2line`` (function, and file:line when the host code has debug
information, ``nvcc -g``), or with the object's symbol table when
addr2line is not installed, and printed as compute-sanitizer's short
backtrace is: the frames of the CUDA runtime's header wrappers
(``cudaMalloc<float>``) left out, none below ``main``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from ptxc.runtime import elfinfo
from ptxc.runtime.protocol import KIND_DEVICE, KIND_MANAGED

WRAPPER = re.compile(r"^cudaError(_t)? cuda\w+<")     # cuda_runtime.h's templates


@dataclass
class Frame:
    object: str
    offset: int                 # the return address in its object
    function: str | None = None
    file: str | None = None
    line: int | None = None

    def text(self) -> str:
        where = f"{self.function} " if self.function else ""
        if self.function and self.file:
            where += f"in {os.path.basename(self.file)}:{self.line} "
        return f"Host Frame: {where}[0x{self.offset:x}] in {os.path.basename(self.object)}"


@dataclass
class Leak:
    address: int
    size: int
    number: int                 # allocation #number of the run
    call: str                   # the CUDA call that made it
    frames: list = field(default_factory=list)

    def block(self) -> list[str]:
        lines = [f"Leaked {self.size:,} bytes at 0x{self.address:x}",
                 f"    allocation #{self.number}, made by {self.call}"]
        if self.frames:
            lines.append("    Saved host backtrace up to driver entry point at allocation time")
            lines += [f"        {f.text()}" for f in self.frames]
        return lines

    def as_dict(self) -> dict:
        return {"address": self.address, "size": self.size, "allocation": self.number,
                "call": self.call,
                "frames": [{"function": f.function, "file": f.file, "line": f.line,
                            "offset": f.offset, "object": f.object} for f in self.frames]}


def find(session, program: str) -> list[Leak]:
    """The leaks of a run that ended (its live device allocations), in
    allocation order, their call sites named."""
    from ptxc.runtime.devmem import KIND_NAMES
    live = sorted((a for a in session.devmem.by_seg.values()
                   if a.kind in (KIND_DEVICE, KIND_MANAGED)), key=lambda a: a.number)
    leaks = []
    for a in live:
        call, sites = a.site or (KIND_NAMES[a.kind], [])
        frames = [Frame(obj or program, off) for obj, off in sites]
        leaks.append(Leak(a.seg << 32, a.size, a.number, call, frames))
    name_frames([f for leak in leaks for f in leak.frames])
    for leak in leaks:
        leak.frames = short_backtrace(leak.frames)
    return leaks


def short_backtrace(frames: list[Frame]) -> list[Frame]:
    """The frames of the application's code: without the CUDA runtime's
    header wrappers, down to main."""
    out = []
    for f in frames:
        if f.function and (WRAPPER.match(f.function) or
                           os.path.basename(f.file or "") in ("cuda_runtime.h",
                                                              "cuda_runtime_api.h")):
            continue
        out.append(f)
        if f.function == "main":
            break
    return out


def name_frames(frames: list[Frame]) -> None:
    """Fill in function, file and line of each frame (by object)."""
    by_object: dict[str, list[Frame]] = {}
    for f in frames:
        by_object.setdefault(f.object, []).append(f)
    tool = shutil.which("addr2line")
    for obj, fs in by_object.items():
        if not (tool and _addr2line(tool, obj, fs)):
            _symbols(obj, fs)


def _addr2line(tool: str, obj: str, frames: list[Frame]) -> bool:
    """Name the frames with ``addr2line -C -f`` (the call is the instruction
    before the return address); False when it could not run."""
    try:
        out = subprocess.run([tool, "-C", "-f", "-e", obj] + [hex(max(f.offset - 1, 0))
                                                              for f in frames],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    lines = out.stdout.splitlines()
    if out.returncode != 0 or len(lines) != 2 * len(frames):
        return False
    for f, function, where in zip(frames, lines[0::2], lines[1::2]):
        f.function = None if function == "??" else function
        path, _, line = where.split(" ")[0].rpartition(":")
        if path and path != "??" and line.isdigit() and int(line) > 0:
            f.file, f.line = path, int(line)
    return True


def _symbols(obj: str, frames: list[Frame]) -> None:
    """Name the frames with the object's function symbols (no lines)."""
    import bisect
    from ptxc.report.kernel_names import demangle
    syms = elfinfo.functions(obj)
    starts = [s[0] for s in syms]
    for f in frames:
        i = bisect.bisect_right(starts, max(f.offset - 1, 0)) - 1
        if i >= 0 and f.offset - 1 < syms[i][0] + max(syms[i][1], 1):
            f.function = syms[i][2]
    names = demangle(f.function for f in frames if f.function)
    for f in frames:
        if f.function:
            f.function = names.get(f.function, f.function)


def summary(leaks: list[Leak]) -> str:
    """compute-sanitizer's LEAK SUMMARY line ('allocations' even for one)."""
    return f"LEAK SUMMARY: {sum(x.size for x in leaks)} bytes leaked in {len(leaks)} allocations"
