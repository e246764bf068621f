"""racecheck and synccheck reports in compute-sanitizer's shape (docs/check.md).

compute-sanitizer's racecheck (CUDA Compute Sanitizer documentation,
"Racecheck Tool", analysis mode) prints one line pair per pair of
instructions with its number of hazards:

    ========= Error: Race reported between Write access at k+0x70 in k.cu:12
    =========     and Read access at k+0x90 in k.cu:14 [64 hazards]
    ========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)

and synccheck ("Synccheck Tool") one block per error:

    ========= Barrier error detected. Divergent thread(s) in warp
    =========     at k+0x70 in k.cu:20
    =========     by thread (0,0,0) in block (0,0,0)

ptxc names the PTX line and opcode instead of the SASS offset, adds the
first occurrence (CTA, both threads, the shared byte and the variable it is
in) and aggregates per distinct error with its count.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ptxc.backends.llvm.plan import DYNAMIC
from ptxc.check.memcheck import fmt3, report_text

FIRST_VERB = {"RAW": ("Write", "Read"), "WAR": ("Read", "Write"), "WAW": ("Write", "Write")}
SYNC_TITLE = {"divergent-warp": "Barrier error detected. Divergent thread(s) in warp",
              "divergent-block": "Barrier error detected. Divergent thread(s) in block",
              "invalid-mask": "Barrier error detected. Invalid arguments"}


@dataclass
class RaceReport:
    """One distinct hazard of a launch, ready to print."""
    kernel: str
    kind: str              # RAW / WAR / WAW
    severity: str          # error / warning
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
    from ptxc.check.initcheck import source_line
    return source_line(module, ins, outermost=True)


def _at(file: str, line: int, opcode: str, source: str) -> str:
    ptx = f"{file}:{line}" if file else f"line {line}"
    return f"{source} ({ptx}, {opcode})" if source else f"{ptx} ({opcode})"


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


# ---------------------------------------------------------------- text
def race_lines(r: RaceReport, file: str = "", name: str = "") -> list[str]:
    file = file or r.file
    v1, v2 = FIRST_VERB[r.kind]
    n = f"{r.count} hazard{'' if r.count == 1 else 's'}"
    where = f" ({r.where})" if r.where else ""
    return [f"{r.severity.capitalize()}: Race reported between {v1} access at {name or r.kernel} in "
            f"{_at(file, r.first_line, r.first_opcode, r.first_source)}",
            f"    and {v2} access at {name or r.kernel} in "
            f"{_at(file, r.second_line, r.second_opcode, r.second_source)} [{n}]",
            f"    first in block ({fmt3(r.block)}): {v1.lower()} by thread ({fmt3(r.first_thread)}), "
            f"{v2.lower()} by thread ({fmt3(r.second_thread)}), __shared__ byte 0x{r.offset:x}{where}"]


def sync_lines(e: SyncReport, file: str = "", name: str = "") -> list[str]:
    file = file or e.file
    unit = "thread" if e.error != "invalid-mask" else "lane"
    return [SYNC_TITLE[e.error],
            f"    at {name or e.kernel} in {_at(file, e.line, e.opcode, e.source)}",
            f"    by thread ({fmt3(e.thread)}) in block ({fmt3(e.block)})",
            f"    {e.detail}",
            f"    {e.count} {unit}{'' if e.count == 1 else 's'} in this launch (first occurrence shown)"]


def race_error_count(reports) -> int:
    """Hazards of error severity (warnings are shown, not counted)."""
    return sum(r.count for r in reports if r.severity == "error")


def race_summary(reports) -> str:
    errors = sum(1 for r in reports if r.severity == "error")
    n = len(reports)
    return (f"RACECHECK SUMMARY: {n} hazard{'' if n == 1 else 's'} displayed ({errors} "
            f"error{'' if errors == 1 else 's'}, {n - errors} warning{'' if n - errors == 1 else 's'})")


def launch_text(tool: str, reports) -> str:
    """The report of one launch (``ptxc opt --check``)."""
    lines = race_lines if tool == "racecheck" else sync_lines
    extra = [race_summary(reports)] if tool == "racecheck" else []
    return report_text(tool, (lines(r) for r in reports), tool_errors(tool, reports), extra)


def tool_errors(tool: str, reports) -> int:
    if tool == "racecheck":
        return race_error_count(reports)
    return sum(r.count for r in reports)


def as_json(tool: str, reports) -> dict:
    d = {"tool": tool, "errors": [r.as_dict() for r in reports],
         "error_count": tool_errors(tool, reports)}
    if tool == "racecheck":
        d["warning_count"] = sum(r.count for r in reports if r.severity == "warning")
    return d


# ------------------------------------------------- ptxc run / ptxc check
ATTR = {"racecheck": "race_hazards", "synccheck": "sync_errors"}


def launch_reports(launches, tool: str):
    """(launch record, report) of every launch, in launch order."""
    for r in launches:
        for e in getattr(r.profile, ATTR[tool], None) or []:
            yield r, e


def launches_errors(launches, tool: str) -> int:
    return tool_errors(tool, [e for _, e in launch_reports(launches, tool)])


def launches_json(launches, tool: str) -> dict:
    rows = [{"launch": r.id, "module": r.module, **e.as_dict()} for r, e in launch_reports(launches, tool)]
    d = {"tool": tool, "error_count": launches_errors(launches, tool), "errors": rows}
    if tool == "racecheck":
        d["warning_count"] = sum(e.count for _, e in launch_reports(launches, tool)
                                 if e.severity == "warning")
    return d


def profile_text(dyn: dict) -> str:
    """The racecheck / synccheck reports of a launch profile's dict
    (Profile.to_dict; ``ptxc opt --check``), '' when it has none."""
    out = ""
    for tool, cls in (("racecheck", RaceReport), ("synccheck", SyncReport)):
        found = (dyn or {}).get(tool)
        if found:
            reports = [cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in e.items()})
                       for e in found["errors"]]
            out += "\n" + launch_text(tool, reports)
    return out


def profile_errors(dyn: dict) -> int:
    """Errors of every check tool in a launch profile's dict."""
    return sum(((dyn or {}).get(t) or {}).get("error_count", 0)
               for t in ("memcheck", "initcheck", "racecheck", "synccheck"))
