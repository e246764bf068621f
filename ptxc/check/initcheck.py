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
(memcheck_report.py); the CUDA source line comes from the PTX's ``.loc``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.check.memcheck import MemcheckError, count_line, fmt3, location, report_text

TITLE = {"load": "read", "atomic": "atomic read"}


@dataclass
class UninitRead(MemcheckError):
    """One distinct uninitialised read of a launch (``error`` is
    'uninitialized'; ``where``: the allocation and offset)."""


def describe_uninit(c, fn, log, sizes: dict) -> list[UninitRead]:
    """The log's uninitialised reads, first occurrence first."""
    out = []
    for e in log.errors():
        _, ins = c.plan.instr_table[e.instr_id]
        out.append(UninitRead(
            kernel=fn.name, line=ins.loc.line if ins.loc else 0, opcode=ins.full_opcode,
            kind=e.kind, space="global", error="uninitialized", size=e.size, count=e.count,
            block=e.cta, thread=e.thread, address=e.address,
            where=inside(e.address, sizes), file=(ins.loc.file or "") if ins.loc else "",
            source=source_line(c.plan.module, ins)))
    return out


def inside(addr: int, sizes: dict) -> str:
    """'allocation #1 (cudaMalloc 400 bytes at 0x600000000) + 128'."""
    from ptxc.launcher.launcher import with_base
    shift = sizes.get("shift", 32)
    seg, off = addr >> shift, addr & ((1 << shift) - 1)
    name, n = sizes.get("buffers", {}).get(seg, (f"segment {seg}", 0))
    return f"{with_base(name, seg << shift, n)} + {off}"


def source_line(module, ins, outermost: bool = False) -> str:
    """'k.cu:3' of an instruction: the CUDA line of the last ``.loc`` before it
    (ptxc.ir.source_lines; an inlined instruction's innermost line, or with
    ``outermost`` the call site in the kernel itself); '' when the PTX has no
    line information."""
    loc = instruction_locations(module).get(id(ins))
    if loc is None:
        return ""
    if outermost and loc.get("inlined_at"):
        loc = loc["inlined_at"][-1]
    return f"{loc['file']}:{loc['line']}"


def instruction_locations(module) -> dict:
    """{id(instruction): location dict} of every instruction of ``module``
    (made once per module; reports look up a few instructions each)."""
    cached = module.attrs.get("instruction_locations")
    if cached is None:
        from ptxc.ir.source_lines import SourceMap
        smap, cached = SourceMap(module), {}
        if smap.has_lines:
            for fn in smap.by_name.values():
                body = [i for b in fn.blocks for i in b.instrs if not i.is_phi]
                cached.update(zip(map(id, body), smap.instr(fn)))
        module.attrs["instruction_locations"] = cached
    return cached


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


def as_json(errors: list[UninitRead], total: int) -> dict:
    return {"tool": "initcheck", "errors": [e.as_dict() for e in errors], "error_count": total}


# ------------------------------------------------------------ ptxc check
def launch_errors(launches):
    """(launch record, UninitRead) of every launch, in launch order."""
    for r in launches:
        for e in getattr(r.profile, "init_errors", None) or []:
            yield r, e


def total_errors(launches) -> int:
    return sum(getattr(r.profile, "init_error_count", 0) or 0 for r in launches)
