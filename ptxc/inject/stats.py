"""Outcome classes of injected runs and their statistics (docs/inject.md).

Classes (SASSI section 8; NVBitFI's "Masked", "SDC", "DUE"):

* ``masked``: the run ends like the fault-free (golden) run: same exit
  status, identical stdout and output files (or output arrays, API);
* ``sdc``: silent data corruption: exit status 0 (the launch completed),
  but the output differs;
* ``due``: a detected unrecoverable error: an out-of-bounds or misaligned
  access, a trap or failed assertion, any other device error, a non-zero
  exit status where the golden run exited 0, a crash, or a hang caught by
  the step budget or the time limit.

The app's own verdict (PASS/FAIL in its stdout) is kept apart: an SDC run
whose stdout says FAIL is an SDC the app detects (``sdc_detected``); an app
that exits non-zero when its check fails turns such runs into DUEs.

95% confidence intervals: the Wilson score interval (E. B. Wilson,
"Probable inference, the law of succession, and statistical inference",
JASA 22(158), 1927), p = (x + z^2/2)/(n + z^2) +- z/(n + z^2) *
sqrt(x(n-x)/n + z^2/4), z = 1.959964 (the 0.975 normal quantile).
"""
from __future__ import annotations

import math

CLASSES = ("masked", "sdc", "due")
Z95 = 1.959963984540054


def wilson(x: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of x successes in n trials ((0, 1) if n = 0)."""
    if n == 0:
        return 0.0, 1.0
    den = n + z * z
    centre = (x + z * z / 2) / den
    half = z / den * math.sqrt(x * (n - x) / n + z * z / 4)
    return max(0.0, centre - half), min(1.0, centre + half)


def summarise(outcomes: list[dict]) -> list[dict]:
    """Rows per kernel then 'all': kernel, runs, and per class count,
    percentage and 95% interval (percent); plus the app-detected SDCs."""
    groups: dict[str, list] = {}
    for o in outcomes:
        groups.setdefault(o["kernel"], []).append(o)
    rows = []
    for name in sorted(groups) + ["all"]:
        group = outcomes if name == "all" else groups[name]
        n = len(group)
        row = {"kernel": name, "runs": n}
        for cls in CLASSES:
            x = sum(1 for o in group if o["outcome"] == cls)
            lo, hi = wilson(x, n)
            row[cls] = x
            row[cls + "_pct"] = 100.0 * x / n if n else 0.0
            row[cls + "_lo"], row[cls + "_hi"] = 100.0 * lo, 100.0 * hi
        row["sdc_detected"] = sum(1 for o in group if o["outcome"] == "sdc" and o.get("app_check") == "FAIL")
        rows.append(row)
    return rows


def shown(label: str, width: int) -> str:
    """A kernel's label in the table: demangled and shortened (ptxc/ir/names.py),
    its ``[fatbinN]`` (two kernels of one name) kept."""
    from ptxc.ir.names import short
    if label == "all":
        return label
    name, sep, module = label.partition(" [")
    suffix = sep + module
    return short(name, max(width - len(suffix), 8)) + suffix


def table(rows: list[dict]) -> str:
    """The summary as text: one line per kernel and 'all'."""
    head = f"{'kernel':<28} {'runs':>5}  " + "  ".join(f"{c.upper():>24}" for c in CLASSES)
    lines = [head, f"{'':<28} {'':>5}  " + "  ".join(f"{'n   %   [95% CI]':>24}" for _ in CLASSES)]
    for r in rows:
        cells = [f"{r[c]:>4} {r[c + '_pct']:5.1f} [{r[c + '_lo']:5.1f},{r[c + '_hi']:5.1f}]"
                 for c in CLASSES]
        name = shown(r["kernel"], 28)
        lines.append(f"{name:<28} {r['runs']:>5}  " + "  ".join(f"{c:>24}" for c in cells))
    detected = rows[-1]["sdc_detected"] if rows else 0
    lines.append(f"SDC runs whose own check printed FAIL: {detected}")
    return "\n".join(lines) + "\n"
