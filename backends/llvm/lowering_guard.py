"""Where each instruction's code starts, and the guard around its lowering
(a mixin of codegen.KernelCodegen).

* ``start_instr`` remembers where each instruction's code starts.
* ``lower`` runs a lowering (ops/). A form ptxc cannot run becomes a
  run-time "not supported yet" error at that instruction, raised only if it
  executes: whatever the lowering raised, a PtxcError naming what is missing
  or any exception of a form it does not handle (a KeyError of a type it has
  no table entry for ...), the code it emitted is dropped and the message
  names the instruction as written (``add.s32 %r2, %r1, 7 (this form of
  add)``), never Python's text.
* ``instr_of_line`` maps a line of the generated LLVM IR back to the PTX
  instruction whose code holds it (guards.invalid_ir_error: LLVM refusing
  the IR is reported at that instruction).
"""
from __future__ import annotations

from bisect import bisect_right

from ptxc.errors import PtxcError
from ptxc.ir.printer import operand_text


class LoweringGuard:
    """Needs ``f`` (irtext.Fn), ``vcache``, the masks ``mv``, ``m``, ``em``,
    ``emi``, ``unsupported`` and the lists ``instr_at`` and ``instr_of``."""

    def start_instr(self, ins) -> None:
        """Before the code of ``ins``: remember where it starts."""
        self.instr_at.append(len(self.f.lines))
        self.instr_of.append(ins)

    def lower(self, ins, fn, *args) -> None:
        """Run a lowering; a form ptxc cannot run becomes a run-time
        'not supported yet' error at this instruction (only if executed).
        Whatever the lowering raised (a PtxcError naming what is missing, or
        any exception of a form it does not handle), the code it emitted is
        dropped and the message names the instruction as written, never
        Python's text."""
        f = self.f
        mark = (len(f.lines), f.cur_label, self.mv, self.m, self.em, self.emi)
        try:
            fn(self, *args)
        except PtxcError as e:
            self._rewind(mark)
            self.unsupported(ins, f"{ins.full_opcode} ({e.message})")
        except Exception:     # noqa: BLE001 - a form the lowering does not handle
            self._rewind(mark)
            self.unsupported(ins, f"{self.shown(ins)} (this form of {ins.opcode})")

    @staticmethod
    def shown(ins) -> str:
        """``opcode.mods operands`` as written (registers by name), at most 80 characters."""
        ops = ", ".join(operand_text(o, lambda v: v.reg or v.name) for o in ins.dsts + ins.srcs)
        text = f"{ins.full_opcode} {ops}".strip()
        return text if len(text) <= 80 else text[:77] + "..."

    def _rewind(self, mark) -> None:
        """Drop what a failed lowering emitted; values cached since are forgotten."""
        f = self.f
        n, f.cur_label, self.mv, self.m, self.em, self.emi = mark
        del f.lines[n:]
        self.vcache.clear()

    def instr_of_line(self, line: str):
        """The PTX instruction whose code holds the LLVM IR line ``line``
        (stripped), or None: how an LLVM error is placed in the PTX."""
        lines = self.f.lines
        i = next((k for k, text in enumerate(lines) if text.strip() == line), None)
        if i is None:
            return None
        if getattr(self, "_text", None) is not None and i > self.dispatch_at:
            i -= 1                          # the switch inserted by _assemble
        k = bisect_right(self.instr_at, i) - 1
        return self.instr_of[k] if k >= 0 else None
