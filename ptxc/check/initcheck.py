"""initcheck reports: the uninitialised global reads an initcheck launch
recorded (backends/llvm/instruments/initcheck.py), in compute-sanitizer's shape
(CUDA Compute Sanitizer documentation, "Initcheck Tool"):

    ========= Uninitialized __global__ memory read of size 4 bytes
    =========     at k(float const*, float*, int) in k.cu:3 (k.ptx:47, ld.global.f32)
    =========     by thread (32,0,0) in block (0,0,0)
    =========     Address 0x600000080
    =========     in allocation #1 (cudaMalloc 400 bytes at 0x600000000) + 128
    =========     68 times in this launch (first occurrence shown)

one block per distinct (instruction, access kind) and launch, as memcheck's
(memcheck.py); the CUDA source line comes from the PTX's ``.loc``.
"""
from __future__ import annotations

from ptxc.check.memcheck import count_line, location, report_text
from ptxc.launcher.access_errors import UninitRead, fmt3

TITLE = {"load": "read", "atomic": "atomic read"}


def error_block(e: UninitRead, file: str = "", name: str = "") -> list[str]:
    """compute-sanitizer's lines for one uninitialised read (no prefix)."""
    return [f"Uninitialized __global__ memory {TITLE.get(e.kind, 'read')} of size {e.size} bytes",
            f"    at {name or e.kernel} in {location(e, file or e.file)}",
            f"    by thread ({fmt3(e.thread)}) in block ({fmt3(e.block)})",
            f"    Address 0x{e.address:x}",
            f"    in {e.where}",
            count_line(e)]


def sanitizer_text(errors: list[UninitRead], total: int) -> str:
    return report_text("initcheck", (error_block(e) for e in errors), total)


# ------------------------------------------------------------ ptxc check
def launch_errors(launches):
    """(launch record, UninitRead) of every launch, in launch order."""
    for r in launches:
        for e in getattr(r.profile, "init_errors", None) or []:
            yield r, e


def total_errors(launches) -> int:
    return sum(getattr(r.profile, "init_error_count", 0) or 0 for r in launches)
