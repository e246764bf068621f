"""The ``--by source`` view of ``ptxc opt``, ``ptxc profile`` and ``ptxc run``:
one row per CUDA source line (ptxc.report.source_profile.line_rows) as a text
table with the source text beside it, or CSV rows (docs/report.md).

Source files are read where ``.file`` names them, else by their base name
in the directories given (the PTX file's directory, the working directory);
a file that cannot be read shows no text, and the numbers are unchanged.
"""
from __future__ import annotations

import csv
import io
import itertools
import os

from ptxc.errors import PtxcError
from ptxc.report.source_profile import ROW_KEYS

TABLE = (("line", None), ("inst", "inst_executed"), ("thread_inst", "thread_inst_executed"),
         ("warp%", "warp_execution_efficiency"), ("br", "branch"),
         ("div", "divergent_branch"), ("br%", "branch_efficiency"), ("req", "mem_requests"),
         ("tx", "mem_transactions"), ("mem%", "memory_efficiency"),
         ("wasted B", "wasted_bytes"))
CSV_COLUMNS = ("file", "kernel") + tuple(k for k in ROW_KEYS if k != "file")
RUN_CSV_COLUMNS = ("file", "kernel", "module") + CSV_COLUMNS[2:]
SOURCE_WIDTH = 60


def no_lines_error(what: str) -> PtxcError:
    return PtxcError(f"{what} has no .loc line information: --by source needs PTX compiled "
                     "with nvcc -lineinfo or -G (or clang -gline-tables-only)")


def read_sources(paths, dirs=()) -> dict:
    """{path as in .file: list of its lines, or None when it cannot be read}."""
    out = {}
    for path in paths:
        if not path or path in out:
            continue
        tries = [path] + [os.path.join(d, os.path.basename(path)) for d in dirs if d is not None]
        out[path] = None
        for p in tries:
            try:
                with open(p, encoding="utf-8", errors="replace") as f:
                    out[path] = f.read().splitlines()
                break
            except OSError:
                continue
    return out


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.1f}"
    return str(v)


def text(kernel: str, rows: list[dict], sources: dict) -> list[str]:
    """The per-source-line table of one kernel (text lines)."""
    lines = [f"  by source line, kernel {kernel} (inst = warp-level instructions executed):"]
    for path, group in itertools.groupby(rows, key=lambda r: r["file"]):
        lines.append(f"  {path or '(no source line: compiler-generated code)'}")
        src = sources.get(path)
        cells = [[h for h, _ in TABLE] + ["source"]]
        for r in group:
            n = r["line"]
            code = src[n - 1].strip() if src and n and n <= len(src) else ""
            cells.append([_cell(n) if key is None else _cell(r[key]) for _, key in TABLE]
                         + [code[:SOURCE_WIDTH]])
        lines += _table(cells)
    return lines


def _table(cells: list[list[str]]) -> list[str]:
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]) - 1)]
    return ["    " + ("  ".join(c.rjust(w) for c, w in zip(row, widths)) + "  " + row[-1]).rstrip()
            for row in cells]


def csv_rows(per_kernel: dict) -> str:
    """CSV, one row per kernel and source line; ``per_kernel``: {kernel: rows},
    or {(kernel, module): rows} (``ptxc run``: a ``module`` column after ``kernel``)."""
    by_module = any(isinstance(k, tuple) for k in per_kernel)
    cols = RUN_CSV_COLUMNS if by_module else CSV_COLUMNS
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for key, rows in per_kernel.items():
        kernel, module = key if by_module else (key, None)
        for r in rows:
            vals = {**r, "kernel": kernel, "module": module,
                    "ptx_lines": " ".join(map(str, r["ptx_lines"]))}
            w.writerow(["" if vals[c] is None else vals[c] for c in cols])
    return buf.getvalue()
