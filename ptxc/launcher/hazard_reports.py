"""What a racecheck or synccheck launch found (docs/check.md), as records: one
per distinct hazard (the pair of instructions, RAW/WAR/WAW, the first CTA,
threads and shared byte, the .shared variable) or barrier error (the
instruction, the first thread, what went wrong), with its count, and their
JSON. The checkers are backends/llvm/instruments/racecheck.py and
synccheck.py; ptxc/check/hazards.py prints the records in
compute-sanitizer's shape.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ptxc.backends.llvm.plan import DYNAMIC
from ptxc.launcher.access_errors import fmt3, source_line


@dataclass
class RaceReport:
    """One distinct hazard of a launch, ready to print."""
    kernel: str
    kind: str              # RAW / WAR / WAW
    severity: str          # error / warning / info (a write of the value the byte held)
    count: int             # hazards (later thread-accesses)
    first_line: int        # the earlier access
    first_opcode: str
    second_line: int       # the later access
    second_opcode: str
    block: tuple
    first_thread: tuple
    second_thread: tuple
    offset: int            # shared byte of the first occurrence
    size: int
    where: str             # the .shared variable it is in
    file: str = ""
    first_source: str = ""  # CUDA source file:line of the two accesses ('' without .loc)
    second_source: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class SyncReport:
    kernel: str
    error: str             # divergent-warp / divergent-block / invalid-mask
    count: int
    line: int
    opcode: str
    block: tuple
    thread: tuple
    detail: str
    file: str = ""
    source: str = ""       # CUDA source file:line ('' without .loc)

    def as_dict(self) -> dict:
        return asdict(self)


def thread3(t: int, block) -> tuple:
    bx, by = block[0], block[1]
    return (t % bx, (t // bx) % by, t // (bx * by))


def _ins(c, iid):
    return c.plan.instr_table[iid][1]


def _line(ins) -> int:
    return ins.loc.line if ins.loc else 0


def _file(ins) -> str:
    return (ins.loc.file or "") if ins.loc else ""


def user_source(module, ins) -> str:
    """'k.cu:12' of an instruction in the kernel's own code: for an inlined
    instruction the outermost call site (the user's call of ``__shfl_sync``,
    not the header's line); '' without line information."""
    return source_line(module, ins, outermost=True)


def shared_variable(plan, offset: int) -> str:
    """'name + k' of the .shared variable holding byte ``offset``."""
    from ptxc.backends.llvm.plan import _symbols
    best = None
    for inst, ins in plan.instr_table:
        for op in list(ins.srcs) + list(ins.dsts):
            for name in _symbols(op):
                try:
                    p = plan.resolve(inst, ins, name)
                except Exception:       # not a variable (a label, a function)
                    continue
                if p.space != "shared":
                    continue
                base = plan.dyn_shared_base if p.offset == DYNAMIC else p.offset
                size = p.var.size or (1 << 62 if p.offset == DYNAMIC else 0)
                if base <= offset < base + size and (best is None or base > best[0]):
                    best = (base, p.var.name)
    return f"{best[1]} + {offset - best[0]}" if best else ""


def describe_hazards(c, fn, block, hazards) -> list[RaceReport]:
    out = []
    for h in hazards:
        a, b = _ins(c, h.first_iid), _ins(c, h.second_iid)
        out.append(RaceReport(
            kernel=fn.name, kind=h.kind, severity=h.severity, count=h.count,
            first_line=_line(a), first_opcode=a.full_opcode, second_line=_line(b),
            second_opcode=b.full_opcode, block=h.cta, first_thread=thread3(h.first_thread, block),
            second_thread=thread3(h.second_thread, block), offset=h.offset, size=h.size,
            where=shared_variable(c.plan, h.offset), file=_file(b),
            first_source=user_source(c.plan.module, a), second_source=user_source(c.plan.module, b)))
    return out


def describe_sync(c, fn, block, errors) -> list[SyncReport]:
    out = []
    for e in errors:
        ins = _ins(c, e.iid)
        out.append(SyncReport(kernel=fn.name, error=e.kind, count=e.count, line=_line(ins),
                              opcode=ins.full_opcode, block=e.cta, thread=thread3(e.thread, block),
                              detail=sync_detail(c, e, block), file=_file(ins),
                              source=user_source(c.plan.module, ins)))
    return out


def lanes_text(mask: int) -> str:
    """'lanes 16-31' / 'lanes 0, 5'."""
    lanes = [k for k in range(32) if mask >> k & 1]
    runs, start = [], None
    for k in lanes + [None]:
        if start is None:
            start = prev = k
        elif k == prev + 1:
            prev = k
        else:
            runs.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = k
    return ("lane " if len(lanes) == 1 else "lanes ") + ", ".join(runs)


def sync_detail(c, e, block) -> str:
    d = e.detail
    if e.kind == "divergent-warp":
        return f"{lanes_text(d['missing'])} of the warp did not reach this barrier"
    if e.kind == "divergent-block":
        other = _ins(c, d["other_iid"])
        t = thread3(d["other_thread"], block)
        return (f"released together with thread ({fmt3(t)}) waiting at line {_line(other)} "
                f"({other.full_opcode})")
    parts = []
    if d.get("missing"):
        parts.append(f"membermask 0x{d['mask']:08x} names {lanes_text(d['missing'])}, which do "
                     f"not execute this instruction")
    if d.get("self_out"):
        parts.append(f"membermask 0x{d['mask']:08x} leaves out the executing lane")
    return "; ".join(parts)


def race_error_count(reports) -> int:
    """Hazards of error severity (warnings and infos are shown, not counted)."""
    return sum(r.count for r in reports if r.severity == "error")


def tool_errors(tool: str, reports) -> int:
    if tool == "racecheck":
        return race_error_count(reports)
    return sum(r.count for r in reports)


def as_json(tool: str, reports) -> dict:
    d = {"tool": tool, "errors": [r.as_dict() for r in reports],
         "error_count": tool_errors(tool, reports)}
    if tool == "racecheck":
        d["warning_count"] = sum(r.count for r in reports if r.severity == "warning")
        d["info_count"] = sum(r.count for r in reports if r.severity == "info")
    return d
