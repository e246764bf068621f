"""What a memcheck or initcheck launch found (docs/check.md), as records: one
per distinct error (instruction, access kind, error) with its first
occurrence (CTA, thread, address), its count, the allocation the address
missed or lies in, and the PTX and CUDA source lines. The instruments'
logs are backends/llvm/instruments/memcheck.py and initcheck.py;
ptxc/check/ prints the records in compute-sanitizer's shape.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ptxc.backends.llvm import layout as Lo
from ptxc.launcher.addresses import describe_address, in_read_only, with_base


@dataclass
class MemcheckError:
    """One distinct error of a launch, ready to print."""
    kernel: str
    line: int            # PTX line of the instruction
    opcode: str
    kind: str            # load / store / atomic
    space: str           # global / shared / local / const / param
    error: str           # out-of-bounds / misaligned / read-only (a write to a .const variable)
    size: int            # bytes per thread
    count: int           # failing thread-accesses
    block: tuple         # CTA of the first occurrence
    thread: tuple        # its thread
    address: int
    where: str           # what the address is near ('' if nothing)
    file: str = ""       # the PTX file of ``line`` (as error messages name it)
    source: str = ""     # CUDA source file:line of the instruction in the user's code:
                         # for inlined code the outermost call site ('' without .loc)
    inlined: str = ""    # for inlined code, the lines it was inlined from, from that
                         # call inwards: 'device_atomic_functions.hpp:107' ('' if none)

    def as_dict(self) -> dict:
        return asdict(self)


def describe_errors(c, fn, log, sizes: dict) -> list[MemcheckError]:
    """The log's errors (memcheck.MemcheckLog), first occurrence first."""
    out = []
    for e in log.errors():
        inst, ins = c.plan.instr_table[e.instr_id]
        space = e.space
        if space == "generic":
            space = {Lo.SEG_SHARED: "shared", Lo.SEG_LOCAL: "local"}.get(
                e.address >> c.plan.shift, "global")
        where = describe_address(e.address, ins, sizes, space=e.space).strip()[1:-1]
        error = "out-of-bounds" if e.code == Lo.ERR_OOB else "misaligned"
        heap, shift = sizes.get("heap"), sizes.get("shift", 32)
        if e.code == Lo.ERR_OOB and e.kind in ("store", "atomic") and space == "global" \
                and in_read_only(e.address, sizes):      # runtime.Launch._segments
            error, where = "read-only", const_variable(c.plan, e.address, sizes) or where
        elif e.code == Lo.ERR_OOB and heap is not None and e.address >> shift == heap.seg and \
                (e.address & ((1 << shift) - 1)) + e.size <= heap.array.nbytes:
            where = heap.describe(e.address & ((1 << shift) - 1), e.size)   # instruments/memcheck_heap.py
        elif e.code == Lo.ERR_OOB:        # passes/memory/provenance.py
            from ptxc.launcher.provenance_message import started_from
            where += started_from(c.plan, inst, ins, e.address, sizes, shadow=e.shadow)
        out.append(MemcheckError(
            kernel=fn.name, line=ins.loc.line if ins.loc else 0, opcode=ins.full_opcode,
            kind=e.kind, space=space, error=error,
            size=e.size, count=e.count, block=e.cta, thread=e.thread, address=e.address,
            where=where, file=(ins.loc.file or "") if ins.loc else "",
            source=source_line(c.plan.module, ins, outermost=True),
            inlined=inlined_lines(c.plan.module, ins)))
    return out


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
            source=source_line(c.plan.module, ins, outermost=True),
            inlined=inlined_lines(c.plan.module, ins)))
    return out


def const_variable(plan, addr: int, sizes: dict) -> str:
    """'the .const variable table + 4' for an address in the .const variables
    (the .const window, or their allocation under ptxc run), '' if none."""
    shift = sizes.get("shift", 32)
    off = addr & ((1 << shift) - 1)
    sizes_by_name = {v.name: v.size for v in plan.module.globals if v.space == "const"}
    for name, start in plan.const_layout.items():
        if start <= off < start + max(sizes_by_name.get(name, 1), 1):
            return f"the .const variable {name} + {off - start}"
    return ""


def inside(addr: int, sizes: dict) -> str:
    """'allocation #1 (cudaMalloc 400 bytes at 0x600000000) + 128'."""
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


def inlined_lines(module, ins) -> str:
    """For an instruction of inlined code (a ``.loc ... inlined_at`` chain),
    the lines below the user's call site, outermost first, joined by ' > ':
    'helper.cuh:30 > device_atomic_functions.hpp:107' (the instruction's own
    line last); '' for code that was not inlined or has no line."""
    loc = instruction_locations(module).get(id(ins))
    if loc is None or not loc.get("inlined_at"):
        return ""
    inner = list(reversed(loc["inlined_at"][:-1])) + [loc]
    return " > ".join(f"{x['file']}:{x['line']}" for x in inner)


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



def fmt3(v) -> str:
    """A CTA or thread index as compute-sanitizer prints it: '1,0,0'."""
    return ",".join(str(x) for x in v)


def memcheck_json(errors: list[MemcheckError], total: int) -> dict:
    return {"tool": "memcheck", "errors": [e.as_dict() for e in errors], "error_count": total}


def initcheck_json(errors: list[UninitRead], total: int) -> dict:
    return {"tool": "initcheck", "errors": [e.as_dict() for e in errors], "error_count": total}
