"""A launch's run-time errors: the executor's error (``RunError``: code, CTA,
warp, lane, instruction, address) as one message with the kernel, CTA,
thread, PTX line and what the address points into, plus what a CUDA
runtime needs to turn it into the GPU's error (docs/launch.md, "Errors").
"""
from __future__ import annotations

from ptxc.errors import PtxcError, SrcLoc, module_line
from ptxc.ir.names import kernel_label
from ptxc.launcher.addresses import describe_address, in_read_only


def device_fault(err: PtxcError, code: int, printf: list, assertions: list) -> None:
    """Attach to a run-time error what a CUDA runtime needs to turn it into
    the GPU's error (ptxc/runtime): the executor's error code
    (``err.device_code``, layout.ERR_*), the printf records of the launch up
    to the failing CTA (``err.printf``) and the failed assertions' lines
    (``err.assertions``)."""
    err.device_code, err.printf, err.assertions = code, printf, assertions


ERR_TEXT = {1: "out-of-bounds access", 2: "misaligned access", 5: "trap",
            6: "not supported yet", 4: "reconvergence stack overflow",
            12: "free() of an address malloc did not return",
            13: "stopped: another CTA of the cooperative launch failed, or no CTA made progress "
                "(a grid-wide wait that never ends)",
            14: "device assertion failed",
            20: "whole-warp matrix instruction (.aligned) executed by only part of the warp "
                "(the PTX ISA requires all 32 lanes)"}


def run_error(c, fn, grid, block, e, max_steps, run_sizes=None, assertions=()) -> PtxcError:
    from ptxc.backends.llvm import layout as Lo
    plan = c.plan
    cx = e.cta % grid[0]
    cy = (e.cta // grid[0]) % grid[1]
    cz = e.cta // (grid[0] * grid[1])
    t = e.warp * 32 + e.lane
    tx, ty, tz = t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1])
    where = f"{kernel_label(fn)}, CTA ({cx},{cy},{cz}), "
    if e.code == Lo.ERR_STEPS:
        node = plan.nodes[e.instr_id] if 0 <= e.instr_id < len(plan.nodes) else None
        label = node.block.label or node.block.name if node else "?"
        body = node.block.body if node else []
        ins = body[0] if body else None
        place = Place(ins, fn)
        line = f", line {place.ptx_line}" if ins is not None and ins.loc else ""
        return place.error(f"{where}warp {e.warp}: no termination within {max_steps} block "
                           f"executions per warp; still looping in block {label} of "
                           f"{node.inst.fn.name if node else '?'}{line}{place.suffix} (raise "
                           f"max_steps if the kernel needs more)")
    if e.code == Lo.ERR_STACK:
        return PtxcError(f"{where}warp {e.warp}: internal error: reconvergence stack overflow")
    inst, ins = plan.instr_table[e.instr_id]
    place = Place(ins, fn)
    what = ERR_TEXT.get(e.code, f"error {e.code}")
    if e.code == Lo.ERR_TEX:
        from ptxc.backends.llvm.ops.texture import error_text
        what = error_text(e.cta)
    if e.code == Lo.ERR_STACK_OVERFLOW:
        from ptxc.backends.llvm.ops.call_frames import frame_model
        frame, size = frame_model(inst.fn), (run_sizes or {}).get("stack")
        of = f" of its {size}-byte stack (cudaLimitStackSize)" if size else ""
        what = (f"stack overflow: calling {inst.fn.name} needs a {frame}-byte frame and "
                f"{e.addr - frame} bytes{of} are in use")
    if e.code == Lo.ERR_BAD_CALL:
        what = bad_call_text(plan, ins, e.addr)
    read_only = e.code == Lo.ERR_OOB and ins.opcode in ("st", "atom", "red") and \
        in_read_only(e.addr, dict(run_sizes or {}, shift=c.plan.shift))
    if read_only:
        what = "write to read-only memory (a .const variable)"
    text = f"{where}thread ({tx},{ty},{tz}): {what}"
    if e.code == Lo.ERR_PARTIAL_WARP:
        text = f"{where}warp {e.warp}: {what} (lanes executing: 0x{e.addr:08x})"
    if e.code == Lo.ERR_UNSUPPORTED:
        text += f": {c.unsupported.get(e.instr_id, ins.full_opcode)} at line {place.ptx_line}"
    else:
        text += f" at line {place.ptx_line} ({ins.full_opcode})"
    text += place.suffix
    if e.code in (Lo.ERR_OOB, Lo.ERR_MISALIGNED, Lo.ERR_BAD_FREE):
        text += f", address 0x{e.addr:x}{describe_address(e.addr, ins, run_sizes)}"
    if e.code == Lo.ERR_OOB and not read_only:
        from ptxc.launcher.provenance_message import started_from
        text += started_from(c.plan, inst, ins, e.addr, run_sizes or {}, getattr(e, "ws", None), e.lane)
    if e.code == Lo.ERR_ASSERT and assertions:
        text += f": {assertions[0].strip()}"
    if inst.parent is not None and e.code != Lo.ERR_STACK_OVERFLOW:
        text += f" in {inst.fn.name} called from line {inst.call.loc.line}"
    err = place.error(text)
    err.site = {"function": inst.fn.name, "at": place.short, "opcode": ins.full_opcode,
                "thread": (tx, ty, tz), "block": (cx, cy, cz), "what": what}
    return err


def bad_call_text(plan, ins, addr: int) -> str:
    """Why an indirect call's pointer could not be called (ERR_BAD_CALL,
    backends/llvm/ops/indirect_calls.py)."""
    from ptxc.ir.call_targets import function_address, prototype, signature_text
    names = {function_address(plan.module, f.name, plan.shift): f for f in plan.module.functions}
    fn = names.get(addr)
    proto = prototype(ins)
    want = f" {signature_text(*proto)}" if proto is not None else ""
    if fn is None:
        null = " (a null function pointer)" if addr == 0 else ""
        return f"indirect call through 0x{addr:x}{null}, which is not the address of a function"
    if fn.is_decl or not fn.blocks:
        return f"indirect call of {fn.name}, which has no body in the module"
    from ptxc.ir.call_targets import matches
    if proto is not None and not matches(fn, proto):
        return (f"indirect call of {fn.name} {signature_text(fn.rets, fn.params)} through a "
                f"pointer of prototype{want}: the signatures differ")
    return f"not supported yet: recursion through an indirect call (of {fn.name})"


class Place:
    """Where a run-time error happened, for its message (docs/launch.md,
    "Errors"): the PTX line, the CUDA line when the PTX has ``.loc``
    (``Instr.source_line``), and how to name the PTX.

    PTX read from a file: the message is at that file's line, with the PTX
    line and a caret, and names the CUDA line (``from k.cu:12``). PTX that
    has no file (a fat binary's under ``ptxc run`` without ``--keep-ptx``:
    the module's ``attrs['ptx_of']`` names it, ``fatbin1``): the message is
    at the CUDA line (with its source text when the file is readable), or
    has no place without ``.loc``, and names the PTX line as ``line N ...
    of the PTX of fatbin1 (write it with --keep-ptx)``."""

    def __init__(self, ins, fn):
        self.ins = ins
        self.module = fn.module
        loc = getattr(ins, "loc", None)
        self.ptx_line = loc.line if loc is not None else 0
        self.source = ins.source_line() if ins is not None else None
        self.ptx_of = (self.module.attrs.get("ptx_of") if self.module is not None else None)

    @property
    def suffix(self) -> str:
        """What follows 'at line N (opcode)' in the message."""
        if self.ptx_of:
            inlined = (" (inlined at " + " < ".join(f"{s.file}:{s.line}" for s in
                                                      self.source.inlined_at) + ")"
                       if self.source is not None and self.source.inlined_at else "")
            return f"{inlined} of the PTX of {self.ptx_of} (write it with --keep-ptx)"
        return f" from {self.source}" if self.source is not None else ""

    @property
    def short(self) -> str:
        """'k.cu:12' (the CUDA line), else 'k.ptx:40', or 'line 40 of the PTX
        of fatbin1' for PTX without a file: where a report block says it was."""
        if self.source is not None:
            return f"{self.source.file}:{self.source.line}"
        if self.ptx_of:
            return f"line {self.ptx_line} of the PTX of {self.ptx_of}"
        loc = getattr(self.ins, "loc", None)
        return f"{loc.file}:{loc.line}" if loc is not None and loc.file else f"line {self.ptx_line}"

    def error(self, text: str) -> PtxcError:
        loc = getattr(self.ins, "loc", None)
        if not self.ptx_of:
            at = SrcLoc(loc.file, loc.line, loc.col) if loc else None
            return PtxcError(text, at, module_line(self.module, at))
        if self.source is None:
            return PtxcError(text)
        at = SrcLoc(self.source.file, self.source.line, max(self.source.col, 1))
        return PtxcError(text, at, file_line(self.source.file, self.source.line)
                         if self.source.col else None)


def file_line(path: str, line: int) -> str | None:
    """Line ``line`` of the text file at ``path`` (the CUDA source a
    message points into), or None when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, text in enumerate(fh, 1):
                if n == line:
                    return text.rstrip("\n")
    except OSError:
        return None
    return None


def space_sizes(run, segment_names: dict) -> dict:
    """Sizes of the state spaces and the name and size of each device segment (messages)."""
    return {"shared": run.shared_total, "local": run.local_size, "const": run.c.plan.const_size,
            "stack": run.stack_size, "read_only": run.read_only,
            "param": run.c.plan.param_size,
            "buffers": {seg: (segment_names.get(seg, f"segment {seg}"), b.nbytes)
                        for seg, b in run.segments.items()},
            "names": segment_names}
