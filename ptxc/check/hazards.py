"""racecheck and synccheck reports in compute-sanitizer's shape (docs/check.md).

compute-sanitizer's racecheck (CUDA Compute Sanitizer documentation,
"Racecheck Tool", analysis mode) prints one line pair per pair of
instructions with its number of hazards:

    ========= Error: Race reported between Write access at k+0x70 in k.cu:12
    =========     and Read access at k+0x90 in k.cu:14 [64 hazards]
    ========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)

(``Error:``, ``Warning:`` or ``Info:``, compute-sanitizer's three severity
levels), and synccheck ("Synccheck Tool") one block per error:

    ========= Barrier error detected. Divergent thread(s) in warp
    =========     at k+0x70 in k.cu:20
    =========     by thread (0,0,0) in block (0,0,0)

ptxc names the PTX line and opcode instead of the SASS offset, adds the
first occurrence (CTA, both threads, the shared byte and the variable it is
in) and aggregates per distinct error with its count.
"""
from __future__ import annotations

from ptxc.check.memcheck import ptx_line, report_text
from ptxc.launcher.access_errors import fmt3
from ptxc.launcher.hazard_reports import RaceReport, SyncReport, tool_errors

FIRST_VERB = {"RAW": ("Write", "Read"), "WAR": ("Read", "Write"), "WAW": ("Write", "Write")}
SYNC_TITLE = {"divergent-warp": "Barrier error detected. Divergent thread(s) in warp",
              "divergent-block": "Barrier error detected. Divergent thread(s) in block",
              "invalid-mask": "Barrier error detected. Invalid arguments"}


def _at(file: str, line: int, opcode: str, source: str) -> str:
    ptx = ptx_line(file, line)
    return f"{source} ({ptx}, {opcode})" if source else f"{ptx} ({opcode})"


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


def race_summary(reports) -> str:
    """compute-sanitizer's summary line; info-level hazards (a write of the
    value the byte already held) are added when there are some."""
    errors = sum(1 for r in reports if r.severity == "error")
    infos = sum(1 for r in reports if r.severity == "info")
    warnings = len(reports) - errors - infos
    n = len(reports)
    info = f", {infos} info" if infos else ""
    return (f"RACECHECK SUMMARY: {n} hazard{'' if n == 1 else 's'} displayed ({errors} "
            f"error{'' if errors == 1 else 's'}, {warnings} warning{'' if warnings == 1 else 's'}{info})")


def launch_text(tool: str, reports) -> str:
    """The report of one launch (``ptxc opt --check``)."""
    lines = race_lines if tool == "racecheck" else sync_lines
    extra = [race_summary(reports)] if tool == "racecheck" else []
    return report_text(tool, (lines(r) for r in reports), tool_errors(tool, reports), extra)


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
        d["info_count"] = sum(e.count for _, e in launch_reports(launches, tool)
                              if e.severity == "info")
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
