"""Guards around compiling kernels: what keeps compile time linear in kernel
size, and what a code generator bug becomes for the user.

* ``gc_paused``: Python's cyclic GC is off while code is generated (jit.py).
* ``invalid_ir_error``: LLVM refusing the generated IR (a code generator bug,
  for a kernel the verifier accepted) is reported at the PTX instruction
  whose code LLVM named, as a located "not supported yet" of that
  instruction, never as Python's or LLVM's text alone; an error that cannot
  be placed is an internal error naming the kernels. No file is written
  unless asked (``PTXC_KEEP_IR=1`` or ``PTXC_DEBUG=1``: the IR goes to a
  temporary file the message names).
"""
from __future__ import annotations

import gc
import os
import re
from contextlib import contextmanager

from ptxc.errors import PtxcError, nth_line


@contextmanager
def gc_paused():
    """Python's cyclic GC off while code is generated: the plan and the code
    generator make millions of small objects that all live until the end,
    and the GC passes they trigger took time that grew faster than the
    kernel (a plan of 64,000 instructions: 0.63 s with the GC, 0.11 s
    without). The parser does the same (ptxc.frontend.parser)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


class InvalidIR(Exception):
    """LLVM refused the generated code: its text and LLVM's message."""

    def __init__(self, text: str, message: str):
        super().__init__(message)
        self.text, self.message = text, message


_PARSE_AT = re.compile(r"<string>:(\d+):\d+: error")


def invalid_ir_error(e: InvalidIR, gens: list, names: str) -> PtxcError:
    """The error for LLVM IR that LLVM refused (a code generator bug): placed
    at the PTX instruction whose code LLVM named, as a 'not supported yet'
    of that instruction; else an internal error naming the kernels. The IR
    is written to a file only on request (PTXC_KEEP_IR=1 or PTXC_DEBUG=1)."""
    line = _named_line(e.text, e.message)
    for g in gens:
        ins = g.instr_of_line(line) if line else None
        if ins is not None and ins.loc is not None:
            fn = ins.block.function if ins.block is not None else None
            source = getattr(getattr(fn, "module", None), "source", None)
            return PtxcError(f"not supported yet: {g.shown(ins)} (ptxc cannot compile this form "
                             f"of {ins.opcode})", ins.loc,
                             nth_line(source, ins.loc.line) if source else None)
    first = [x for x in e.message.strip().splitlines() if x.strip()]
    kept = ""
    if os.environ.get("PTXC_KEEP_IR") == "1" or os.environ.get("PTXC_DEBUG") == "1":
        import tempfile
        fd, path = tempfile.mkstemp(prefix=f"ptxc-{names.split(',')[0][:40]}-", suffix=".ll",
                                    dir=os.environ.get("TMPDIR") or None)
        with os.fdopen(fd, "w") as fh:
            fh.write(e.text)
        kept = f" (the IR is in {path})"
    reason = first[-1] if first else "LLVM refused it"
    return PtxcError(f"internal error: invalid LLVM IR for kernel(s) {names}{kept}: {reason[:200]}")


def _named_line(text: str, message: str) -> str | None:
    """The line of ``text`` an LLVM error names: by number (parse errors) or
    quoted (verifier errors), stripped."""
    m = _PARSE_AT.search(message)
    if m is not None:
        lines = text.split("\n")
        n = int(m.group(1))
        return lines[n - 1].strip() if 0 < n <= len(lines) else None
    quoted = [q.strip() for q in message.splitlines() if q.startswith("  ") and q.strip()]
    return quoted[-1] if quoted else None          # "does not dominate": the use
