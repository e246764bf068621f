"""The control-flow graph of one function as SVG, for the HTML report
(docs/report.md): a layered layout of our own (no graphviz needed).

Layout: back edges are those to a block that a depth-first search from the
entry still has on its stack (loops); the other edges form a DAG whose
blocks get a layer = longest path from the entry; blocks of one layer are
placed left to right in text order. Forward edges are straight lines, back
edges curve round the right side. Blocks are coloured as ``--emit=dot``
colours them (passes/cfg_profile.py): fill from white to red by the
fraction of the warp executions of the block's conditional branch that
diverged, border thicker and bluer as the memory efficiency of its loads and
stores drops, grey and dashed when no warp executed it. Each block is
labelled with its name, warp executions, divergence and memory efficiency,
and has a ``<title>`` (hover text) with the details.
"""
from __future__ import annotations

from html import escape

from ptxc.passes.count.memory_ranking import block_efficiency

BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 170, 54, 50, 36, 20
LEFT = 70                           # room for the edges that skip layers (left of the boxes)


def back_edges(fn) -> set:
    """(source index, target index) of the edges that close a loop (DFS from the entry)."""
    index = {id(b): k for k, b in enumerate(fn.blocks)}
    back, state = set(), {}
    stack = [(fn.blocks[0], iter(fn.blocks[0].succs))] if fn.blocks else []
    state[id(fn.blocks[0])] = 1 if fn.blocks else None
    while stack:
        blk, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[id(blk)] = 2
            stack.pop()
        elif state.get(id(nxt)) == 1:
            back.add((index[id(blk)], index[id(nxt)]))
        elif id(nxt) not in state:
            state[id(nxt)] = 1
            stack.append((nxt, iter(nxt.succs)))
    return back


def layers(fn, back: set) -> list[int]:
    """Layer of every block: longest forward path from a block without predecessors."""
    index = {id(b): k for k, b in enumerate(fn.blocks)}
    layer = [0] * len(fn.blocks)
    for _ in range(len(fn.blocks)):          # relax in text order until stable (a DAG)
        changed = False
        for k, b in enumerate(fn.blocks):
            for s in b.succs:
                j = index[id(s)]
                if (k, j) not in back and layer[j] < layer[k] + 1:
                    layer[j] = layer[k] + 1
                    changed = True
        if not changed:
            break
    return layer


def positions(fn) -> tuple[list, set, int, int]:
    """(x, y) of each block, the back edges, the width and height of the drawing."""
    back = back_edges(fn)
    layer = layers(fn, back)
    slots: dict = {}
    pos = []
    for k in range(len(fn.blocks)):
        col = slots.get(layer[k], 0)
        slots[layer[k]] = col + 1
        pos.append((LEFT + col * (BOX_W + GAP_X), MARGIN + layer[k] * (BOX_H + GAP_Y)))
    cols = max(slots.values(), default=1)
    width = LEFT + MARGIN + cols * (BOX_W + GAP_X) + 40
    height = 2 * MARGIN + (max(layer, default=0) + 1) * (BOX_H + GAP_Y)
    return pos, back, width, height


def block_info(fn, profile: dict) -> list[dict]:
    """Counts and colours of every block from a profile dict."""
    bank = (profile.get("memory") or {}).get("shared_bank_bytes", 4)
    eff = block_efficiency(profile.get("per_memory_instr") or {}, fn.name, bank)
    out = []
    for b in fn.blocks:
        key = f"{fn.name}:{b.name}"
        execs = (profile.get("per_block") or {}).get(key, {}).get("warp_execs", 0)
        br = (profile.get("per_branch") or {}).get(key)
        div = br["divergent"] / br["warp_execs"] if br and br["warp_execs"] else None
        out.append({"name": b.name, "warp_execs": execs, "divergence": div,
                    "memory_efficiency": eff.get(b.name), "branch": br,
                    "instructions": len(b.body)})
    return out


def _fill(info: dict) -> str:
    if not info["warp_execs"]:
        return "#e0e0e0"
    div = info["divergence"] or 0.0
    g = round(255 * (1 - div))
    return f"rgb(255,{g},{g})"


def _stroke(info: dict) -> tuple[str, float]:
    eff = info["memory_efficiency"]
    if eff is None:
        return "#333333", 1.0
    waste = max(0.0, min(1.0, 1 - eff / 100))
    return f"rgb({round(51 * (1 - waste))},{round(51 * (1 - waste))},{round(51 + 204 * waste)})", 1 + 4 * waste


def _label(info: dict) -> list[str]:
    lines = [info["name"], f"warps {info['warp_execs']}" if info["warp_execs"] else "not executed"]
    extra = []
    if info["divergence"] is not None:
        extra.append(f"div {100 * info['divergence']:.0f}%")
    if info["memory_efficiency"] is not None:
        extra.append(f"mem {info['memory_efficiency']:.0f}%")
    if extra:
        lines.append(", ".join(extra))
    return lines


def _title(info: dict) -> str:
    text = f"{info['name']}: {info['instructions']} instructions, {info['warp_execs']} warp executions"
    br = info["branch"]
    if br:
        text += (f"; branch: {br['warp_execs']} warp executions, {br['divergent']} divergent, "
                 f"{br['taken']} threads taken, {br['not_taken']} not taken")
    if info["memory_efficiency"] is not None:
        text += f"; memory efficiency {info['memory_efficiency']:.1f}%"
    return text


def cfg_svg(fn, profile: dict) -> str:
    """The SVG drawing of ``fn``'s CFG coloured by ``profile`` (Profile.to_dict())."""
    pos, back, width, height = positions(fn)
    infos = block_info(fn, profile)
    index = {id(b): k for k, b in enumerate(fn.blocks)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="cfg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" data-function="{escape(fn.name)}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" '
             'fill="#555"/></marker></defs>']
    for k, b in enumerate(fn.blocks):
        for s in b.succs:
            parts.append(_edge(pos[k], pos[index[id(s)]], (k, index[id(s)]) in back))
    for k, info in enumerate(infos):
        parts.append(_box(pos[k], info))
    parts.append("</svg>")
    return "".join(parts)


def _edge(a: tuple, b: tuple, is_back: bool) -> str:
    x1, y1 = a[0] + BOX_W / 2, a[1] + BOX_H
    if is_back:
        x1, y1 = a[0] + BOX_W, a[1] + BOX_H * 0.7      # leave low on the right side,
        x2, y2 = b[0] + BOX_W, b[1] + BOX_H * 0.3      # come back high: self loops show
        bend = max(x1, x2) + 30 + 0.15 * abs(y1 - y2)
        d = f"M{x1:.0f},{y1:.0f} C{bend:.0f},{y1:.0f} {bend:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
        return f'<path class="edge back" d="{d}" fill="none" stroke="#888" stroke-dasharray="4 3" marker-end="url(#arrow)"/>'
    x2, y2 = b[0] + BOX_W / 2, b[1]
    if y2 - y1 > GAP_Y + 1:              # skips a layer: round the left side, not behind boxes
        x1, y1 = a[0], a[1] + BOX_H * 0.7
        x2, y2 = b[0], b[1] + BOX_H * 0.3
        bend = min(x1, x2) - 25 - 0.04 * (y2 - y1)
        d = f"M{x1:.0f},{y1:.0f} C{bend:.0f},{y1:.0f} {bend:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
        return f'<path class="edge" d="{d}" fill="none" stroke="#555" marker-end="url(#arrow)"/>'
    return (f'<line class="edge" x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" '
            'stroke="#555" marker-end="url(#arrow)"/>')


def _box(p: tuple, info: dict) -> str:
    stroke, width = _stroke(info)
    dash = ' stroke-dasharray="4 3"' if not info["warp_execs"] else ""
    out = [f'<g class="block" data-block="{escape(info["name"])}" '
           f'data-warp-execs="{info["warp_execs"]}"><title>{escape(_title(info))}</title>',
           f'<rect x="{p[0]}" y="{p[1]}" width="{BOX_W}" height="{BOX_H}" rx="5" '
           f'fill="{_fill(info)}" stroke="{stroke}" stroke-width="{width:.2f}"{dash}/>']
    for i, text in enumerate(_label(info)):
        weight = ' font-weight="bold"' if i == 0 else ""
        out.append(f'<text x="{p[0] + BOX_W / 2:.0f}" y="{p[1] + 16 + 15 * i}" '
                   f'text-anchor="middle" font-size="12"{weight}>{escape(text[:26])}</text>')
    out.append("</g>")
    return "".join(out)
