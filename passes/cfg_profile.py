"""Colours for ``--emit=dot`` after a launch (passes/cfg.py): each basic
block of the launched kernel (and of the functions it called) is drawn

* filled by **divergence**: the fraction of the warp executions of the
  block's conditional branch that diverged (``per_branch``: divergent /
  warp_execs), from white (0 %, or no conditional branch) to red (100 %);
* outlined by **memory inefficiency** (with memory counters): the block's
  loads and stores moved ``moved`` bytes for ``requested`` bytes
  (ptxc.passes.count.memory_ranking.block_efficiency); the border is black at 100 % and
  thicker and bluer as the efficiency drops;
* grey and dashed when no warp executed it.

The label gets the warp executions, the divergence and the memory
efficiency. A legend node explains the encoding.
"""
from __future__ import annotations

from ptxc.passes.count.memory_ranking import block_efficiency

LEGEND = ("legend [shape=note, style=filled, fillcolor=\"#f8f8f8\", label=\"fill: divergent "
          "warp executions of the block's branch (white 0% .. red 100%)\\lborder: memory "
          "efficiency of its loads/stores (black 100% .. thick blue 0%)\\lgrey dashed: not "
          "executed\\l\"];")


class BlockStyles:
    """DOT attributes of blocks, from a launch's profile dict (Profile.to_dict)."""

    def __init__(self, profile: dict):
        self.profile = profile
        self.bank_bytes = (profile.get("memory") or {}).get("shared_bank_bytes", 4)
        self._eff: dict = {}

    def covers(self, fn) -> bool:
        prefix = fn.name + ":"
        return any(k.startswith(prefix) for k in self.profile.get("per_block") or {})

    def efficiency(self, fn) -> dict:
        if fn.name not in self._eff:
            per = self.profile.get("per_memory_instr") or {}
            self._eff[fn.name] = block_efficiency(per, fn.name, self.bank_bytes)
        return self._eff[fn.name]

    def attrs(self, fn, block) -> tuple[str, str]:
        """(extra label text, DOT attributes) of one block."""
        key = f"{fn.name}:{block.name}"
        execs = (self.profile.get("per_block") or {}).get(key, {}).get("warp_execs", 0)
        if not execs:
            return "\\nnot executed", 'style="dashed,filled", fillcolor="#e0e0e0", color="#909090"'
        br = (self.profile.get("per_branch") or {}).get(key)
        div = br["divergent"] / br["warp_execs"] if br and br["warp_execs"] else 0.0
        label = f"\\nwarps {execs}" + (f", divergent {100 * div:.0f}%" if br else "")
        attrs = [f'style=filled, fillcolor="0.000 {div:.3f} 1.000"']
        eff = self.efficiency(fn).get(block.name)
        if eff is not None:
            waste = max(0.0, min(1.0, 1.0 - eff / 100.0))
            label += f"\\nmemory efficiency {eff:.0f}%"
            attrs.append(f'color="0.667 {waste:.3f} {0.4 + 0.6 * waste:.3f}", '
                         f"penwidth={1 + 4 * waste:.2f}")
        return label, ", ".join(attrs)
