"""The control-flow graph of a function, as an analysis, a report and DOT.

The parser already stores every edge in ``Block.succs``/``Block.preds``
(fall-through included); this analysis adds what the other analyses need:
the exit blocks (``ret``/``exit``/``trap``, guarded ones too, and a block that
falls off the end of the function), the reverse post order from the entry
(iterative depth-first search, Cormen et al. 22.3), the reachable blocks, and
the edges as integer adjacency lists indexed by ``Block.index``, so that the
dominator code works on plain lists of ints.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.ir.passmanager import Analysis, Pass, PassResult

EXIT_OPCODES = ("ret", "exit", "trap")


def defined_functions(module) -> list:
    """The functions of ``module`` that have a body, in written order."""
    return [f for f in module.functions if not f.is_decl]


def falls_through(block) -> bool:
    """True if control can reach the end of ``block`` without jumping."""
    term = block.terminator
    return term is None or term.guard is not None


def is_exit_block(block) -> bool:
    """True if control can leave the function from ``block``."""
    last = block.instrs[-1] if block.instrs else None
    if last is not None and last.opcode in EXIT_OPCODES:
        return True
    if not block.succs:
        return True
    fn = block.function
    last_block = fn is None or block.index == len(fn.blocks) - 1
    return falls_through(block) and last_block and block.fallthrough is None


def postorder(n: int, entry: int, succs: list[list[int]]) -> list[int]:
    """Nodes reachable from ``entry`` in depth-first post order (iterative)."""
    seen = [False] * n
    seen[entry] = True
    out: list[int] = []
    stack = [(entry, iter(succs[entry]))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if not seen[s]:
                seen[s] = True
                stack.append((s, iter(succs[s])))
                break
        else:
            stack.pop()
            out.append(node)
    return out


class CFGInfo:
    """The CFG facts of one function (see the module docstring)."""

    def __init__(self, fn):
        self.function = fn
        self.blocks: list = list(fn.blocks)
        self.entry = fn.entry
        n = len(self.blocks)
        self.succ_idx: list[list[int]] = [[s.index for s in b.succs] for b in self.blocks]
        self.pred_idx: list[list[int]] = [[p.index for p in b.preds] for b in self.blocks]
        self.exit_flags: list[bool] = [is_exit_block(b) for b in self.blocks]
        self.exits: list = [b for b, e in zip(self.blocks, self.exit_flags) if e]
        po = postorder(n, 0, self.succ_idx) if n else []
        self.rpo: list = [self.blocks[i] for i in reversed(po)]
        self.reach_flags: list[bool] = [False] * n
        for i in po:
            self.reach_flags[i] = True
        self.reachable: list = [b for b in self.blocks if self.reach_flags[b.index]]
        self.unreachable: list = [b for b in self.blocks if not self.reach_flags[b.index]]
        self.edges: list[tuple] = [(b, s) for b in self.blocks for s in b.succs]

    def is_reachable(self, block) -> bool:
        return self.reach_flags[block.index]

    def is_exit(self, block) -> bool:
        return self.exit_flags[block.index]


class CFG(Analysis):
    """Analysis: :class:`CFGInfo` of a function."""
    name = "cfg"

    @classmethod
    def compute(cls, fn, am) -> CFGInfo:
        return CFGInfo(fn)


def _succ_text(info: CFGInfo, block) -> str:
    names = [s.name for s in block.succs]
    if info.is_exit(block):
        names.append("exit")
    return ", ".join(names) if names else "-"


def function_report(info: CFGInfo) -> tuple[str, dict]:
    """The text and JSON report of one function's CFG."""
    fn = info.function
    lines = [f"cfg @{fn.name}: {len(info.blocks)} blocks, {len(info.edges)} edges, "
             f"{len(info.exits)} exits"]
    for b in info.blocks:
        lines.append(f"  {b.name} [{len(b.body)}] -> {_succ_text(info, b)}")
    lines.append(f"  entry: {info.entry.name if info.entry else '-'}")
    lines.append(f"  exits: {' '.join(b.name for b in info.exits) or '-'}")
    if info.unreachable:
        lines.append(f"  unreachable: {' '.join(b.name for b in info.unreachable)}")
    data = {
        "entry": info.entry.name if info.entry else None,
        "exits": [b.name for b in info.exits],
        "unreachable": [b.name for b in info.unreachable],
        "blocks": [{"name": b.name, "instrs": len(b.body),
                    "succs": [s.name for s in b.succs],
                    "preds": [p.name for p in b.preds]} for b in info.blocks],
    }
    return "\n".join(lines) + "\n", data


@dataclass(frozen=True)
class CFGPass(Pass):
    name = "cfg"
    summary = "print each function's basic blocks, edges, exits and unreachable blocks"

    def run(self, module, am) -> PassResult:
        texts, data = [], {}
        for fn in defined_functions(module):
            text, data[fn.name] = function_report(am.get(CFG, fn))
            texts.append(text)
        return PassResult(self.name, "".join(texts), data)


# ------------------------------------------------------------------ DOT

def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _function_dot(k: int, fn, styles=None) -> list[str]:
    node = lambda b: _quote(f"f{k}_{b.index}")   # noqa: E731
    out = [f"  subgraph {_quote(f'cluster_{k}')} {{", f"    label={_quote('@' + fn.name)};"]
    for b in fn.blocks:
        if styles is None:
            out.append(f"    {node(b)} [label={_quote(f'{b.name} [{len(b.body)}]')}];")
            continue
        extra, attrs = styles.attrs(fn, b)
        label = _quote(f"{b.name} [{len(b.body)}]")[:-1] + extra + "\""   # extra: DOT \\n escapes
        out.append(f"    {node(b)} [label={label}, {attrs}];")
    for b in fn.blocks:
        for s in b.succs:
            out.append(f"    {node(b)} -> {node(s)};")
    out.append("  }")
    return out


def to_dot(module) -> str:
    """Graphviz DOT of every function's CFG (node label: block name [instrs]).
    After a launch (the count pass leaves ``module.attrs['launch_profile']``)
    the blocks of the launched code are coloured by divergence and memory
    efficiency, with a legend (passes/cfg_profile.py)."""
    from .cfg_profile import LEGEND, BlockStyles
    profile = module.attrs.get("launch_profile")
    styles = BlockStyles(profile) if profile else None
    lines = ["digraph ptxc {", '  node [shape=box, fontname="monospace"];']
    for k, fn in enumerate(defined_functions(module)):
        lines.extend(_function_dot(k, fn, styles if styles and styles.covers(fn) else None))
    if styles is not None:
        lines.append("  " + LEGEND)
    lines.append("}")
    return "\n".join(lines) + "\n"
