"""SASSI-style plots for the HTML report, as SVG (docs/report.md).

* ``sectors_svg``: per global memory instruction, the histogram of 32-byte
  sectors per warp-level request (``per_memory_instr[..]['global']
  ['sectors_hist']``, docs/metrics.md): SASSI's memory-divergence PMF
  (Stephenson et al., ISCA 2015, Fig. 8), one small chart per instruction,
  the bar height the fraction of its requests.
* ``divergence_svg``: per conditional branch, its warp executions split into
  divergent and uniform ones, and its threads into taken and not taken
  (``per_branch``: SASSI's five numbers per branch, Fig. 6), as two stacked
  bars per branch.

Every bar has a ``<title>`` with its exact numbers (hover).
"""
from __future__ import annotations

from html import escape

CHART_W, CHART_H, PAD = 260, 120, 30


def _bar(x, y, w, h, color: str, title: str, cls: str = "bar") -> str:
    return (f'<rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'fill="{color}"><title>{escape(title)}</title></rect>')


def _text(x, y, text: str, anchor: str = "start", size: int = 11) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}">'
            f'{escape(text)}</text>')


def sectors_svg(memory_rows: list[dict]) -> str:
    """Charts of sectors per request; ``memory_rows``: dicts with ``label``, ``hist``."""
    rows = [r for r in memory_rows if sum(r["hist"])]
    if not rows:
        return '<p class="empty">no global memory requests (or run without memory counters)</p>'
    cols = 3
    width = cols * (CHART_W + PAD)
    height = ((len(rows) + cols - 1) // cols) * (CHART_H + 2 * PAD)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot sectors" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}">']
    for k, r in enumerate(rows):
        x0 = (k % cols) * (CHART_W + PAD) + PAD
        y0 = (k // cols) * (CHART_H + 2 * PAD) + PAD
        parts.append(_chart(x0, y0, r))
    parts.append("</svg>")
    return "".join(parts)


def _chart(x0: float, y0: float, r: dict) -> str:
    hist = r["hist"]
    n = sum(hist)
    bw = CHART_W / len(hist)
    out = [_text(x0, y0 - 8, r["label"][:44], size=11),
           f'<line x1="{x0}" y1="{y0 + CHART_H}" x2="{x0 + CHART_W}" y2="{y0 + CHART_H}" stroke="#333"/>']
    for s, count in enumerate(hist):
        if not count:
            continue
        h = CHART_H * count / n
        out.append(_bar(x0 + s * bw, y0 + CHART_H - h, max(bw - 1, 1), h, "#4a78c2",
                        f"{s + 1} sectors: {count} of {n} requests ({100 * count / n:.1f}%)"))
    for s in (1, 4, 8, 16, 32):
        out.append(_text(x0 + (s - 0.5) * bw, y0 + CHART_H + 12, str(s), "middle", 9))
    out.append(_text(x0 + CHART_W, y0 + CHART_H + 24, "sectors per request; bar: share of requests",
                     "end", 9))
    return "".join(out)


def divergence_svg(branches: list[dict]) -> str:
    """Stacked bars per branch; ``branches``: dicts with ``label`` and SASSI's numbers."""
    rows = [b for b in branches if b["warp_execs"]]
    if not rows:
        return '<p class="empty">no conditional branch executed</p>'
    label_w, bar_w, row_h = 230, 300, 34
    width = label_w + bar_w + 2 * PAD + 220
    height = len(rows) * row_h + 2 * PAD
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot divergence" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}">',
             _text(label_w + PAD, 14, "warp executions: divergent (red) / uniform (green); "
                   "threads: taken (dark) / not taken (light)", size=10)]
    for k, b in enumerate(rows):
        y = PAD + k * row_h
        parts.append(_text(PAD, y + 14, b["label"][:34]))
        div = b["divergent"] / b["warp_execs"]
        x = label_w + PAD
        parts.append(_bar(x, y, bar_w * div, 12, "#d9534f",
                          f"{b['divergent']} of {b['warp_execs']} warp executions divergent",
                          "bar divergent"))
        parts.append(_bar(x + bar_w * div, y, bar_w * (1 - div), 12, "#5cb85c",
                          f"{b['warp_execs'] - b['divergent']} of {b['warp_execs']} uniform"))
        threads = b["taken"] + b["not_taken"]
        taken = b["taken"] / threads if threads else 0
        parts.append(_bar(x, y + 14, bar_w * taken, 8, "#555",
                          f"{b['taken']} of {threads} threads taken"))
        parts.append(_bar(x + bar_w * taken, y + 14, bar_w * (1 - taken), 8, "#bbb",
                          f"{b['not_taken']} of {threads} threads not taken"))
        parts.append(_text(x + bar_w + 6, y + 11, f"{100 * div:.0f}% divergent", size=10))
    parts.append("</svg>")
    return "".join(parts)
