"""memcheck reports: the errors a memcheck launch recorded
(ptxc/launcher/access_errors.py) printed in compute-sanitizer's shape, per
launch and over the launches of an application (docs/check.md).

compute-sanitizer prints one block per error occurrence (CUDA Compute
Sanitizer documentation, "Memcheck Tool", "Understanding Memcheck Errors"):

    ========= Invalid __global__ read of size 4 bytes
    =========     at kernel+0x70 in file.cu:12
    =========     by thread (0,0,0) in block (0,0,0)
    =========     Address 0x7f00 is out of bounds
    =========
    ========= ERROR SUMMARY: 1 error

ptxc prints one block per distinct error (instruction, access kind, error)
for its first occurrence, with the PTX line in place of the SASS offset, the
number of occurrences, and the allocation the address missed
(ptxc/launcher/addresses.py, nearest_buffer).
"""
from __future__ import annotations

from ptxc.launcher.access_errors import MemcheckError, fmt3

VERB = {"load": "read", "store": "write", "atomic": "atomic"}
PREFIX = "========="


def error_block(e: MemcheckError, file: str = "", name: str = "") -> list[str]:
    """compute-sanitizer's lines for one error (without the ===== prefix);
    ``name``: the kernel's readable (demangled) name."""
    what = {"out-of-bounds": "is out of bounds", "read-only": "is read-only"}.get(e.error, "is misaligned")
    lines = [f"Invalid __{e.space}__ {VERB[e.kind]} of size {e.size} bytes",
             f"    at {name or e.kernel} in {location(e, file or e.file)}",
             f"    by thread ({fmt3(e.thread)}) in block ({fmt3(e.block)})",
             f"    Address 0x{e.address:x} {what}"]
    if e.where:
        lines.append(f"    and is {e.where}" if e.error == "out-of-bounds" else f"    in {e.where}")
    lines.append(count_line(e))
    return lines


def location(e, file: str) -> str:
    """Where an error's instruction is: 'k.cu:3 (k.ptx:47, ld.global.f32)',
    or 'k.ptx:47 (ld.global.f32)' without a CUDA source line. Inlined code
    (an atomicAdd from CUDA's headers) shows the user's line first, then the
    lines it was inlined from: 'k.cu:6 > device_atomic_functions.hpp:107
    (k.ptx:52, atom.global.add.u32)'."""
    at = ptx_line(file, e.line)
    inlined = getattr(e, "inlined", "")
    source = f"{e.source} > {inlined}" if e.source and inlined else e.source
    return f"{source} ({at}, {e.opcode})" if source else f"{at} ({e.opcode})"


NO_FILE = "the PTX of "


def ptx_line(file: str, line: int) -> str:
    """'k.ptx:47'; 'line 47' without a file; 'line 47 of the PTX of
    fatbin1' for a fat binary's PTX that has no file (ptx_file)."""
    if file.startswith(NO_FILE):
        return f"line {line} of {file}"
    return f"{file}:{line}" if file else f"line {line}"


def ptx_file(r, e) -> str:
    """How the report names the PTX of launch record ``r`` (``ptxc run``):
    the file (``--keep-ptx``, ``--ptx``), or 'the PTX of fatbinN' when it
    has none (the module's ``attrs['ptx_of']``, runtime/modules.py)."""
    module = getattr(r, "ptx_module", None)
    label = module.attrs.get("ptx_of") if module is not None else None
    return NO_FILE + label if label else (e.file or r.module)


def count_line(e) -> str:
    """The last line of an error block: how often it happened."""
    return (f"    {e.count} {'time' if e.count == 1 else 'times'} in this launch "
            f"(first occurrence shown)")


def report_text(tool: str, blocks, total: int, extra=(), head=()) -> str:
    """A whole compute-sanitizer report of ``tool``: the banner, the ``head``
    lines (prefixed), each block's lines (prefixed, then a bare prefix
    line), the ``extra`` summary lines (prefixed), the ERROR SUMMARY line."""
    out = [f"{PREFIX} COMPUTE-SANITIZER (ptxc {tool})"]
    out += [f"{PREFIX} {x}" for x in head]
    for block in blocks:
        out += [f"{PREFIX} {x}" for x in block]
        out.append(PREFIX)
    out += [f"{PREFIX} {x}" for x in extra]
    out.append(f"{PREFIX} ERROR SUMMARY: {total} error{'' if total == 1 else 's'}")
    return "\n".join(out) + "\n"


def sanitizer_text(errors: list[MemcheckError], total: int) -> str:
    """The whole report: every error block, then the summary line."""
    return report_text("memcheck", (error_block(e) for e in errors), total)


# ------------------------------------------------ ptxc run / ptxc check
ERROR_TEMPLATE = {"launch": 0, "kernel": "", "module": "", "line": 0, "opcode": "", "kind": "",
                  "space": "", "error": "", "size": 0, "count": 0, "block_x": 0, "block_y": 0,
                  "block_z": 0, "thread_x": 0, "thread_y": 0, "thread_z": 0, "address": 0,
                  "where": "", "file": "", "source": "", "inlined": ""}


def checked(launches) -> bool:
    """Did these launches run under memcheck (``--on-error=continue``)?"""
    return any(getattr(r.profile, "mem_errors", None) is not None for r in launches)


def launch_errors(launches):
    """(launch record, MemcheckError) of every launch, in launch order."""
    for r in launches:
        for e in getattr(r.profile, "mem_errors", None) or []:
            yield r, e


def error_rows(launches) -> list[dict]:
    """The rows of the report's ``errors`` table (one per distinct error and launch)."""
    rows = []
    for r, e in launch_errors(launches):
        rows.append({"launch": r.id, "kernel": e.kernel, "module": r.module, "line": e.line,
                     "opcode": e.opcode, "kind": e.kind, "space": e.space, "error": e.error,
                     "size": e.size, "count": e.count, "block_x": e.block[0],
                     "block_y": e.block[1], "block_z": e.block[2], "thread_x": e.thread[0],
                     "thread_y": e.thread[1], "thread_z": e.thread[2],
                     "address": e.address, "where": e.where, "file": e.file,
                     "source": e.source, "inlined": e.inlined})
    return rows


def total_errors(launches) -> int:
    return sum(getattr(r.profile, "mem_error_count", 0) or 0 for r in launches)


def launches_text(launches) -> str:
    """compute-sanitizer's report over every launch of an application (the
    PTX module of each error named by its label)."""
    from ptxc.report.kernel_names import demangle
    readable = demangle(e.kernel for _, e in launch_errors(launches))
    blocks = (error_block(e, ptx_file(r, e), readable[e.kernel]) for r, e in launch_errors(launches))
    return report_text("memcheck", blocks, total_errors(launches))


def launches_json(launches) -> dict:
    return {"tool": "memcheck", "error_count": total_errors(launches), "errors": error_rows(launches)}
