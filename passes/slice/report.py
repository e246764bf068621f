"""The slice report: sizes, fraction and the control inputs of each function.

Control inputs are what the kept instructions read from outside the code:
special registers (``%tid.x`` ...), kernel parameters (``ld.param``), and
memory, named by region with pointer provenance (slice_regions): a load whose
address comes from ``ld.param`` of parameter P (through cvta/add/mul...) reads
region ``param P``; one addressed through a variable's symbol reads that
variable; anything else reads ``SPACE:?``. For a kernel they are gathered over
its whole universe (the kernel and the functions it calls), so the sentence
"control flow depends only on %tid.x and param n" covers the callees too.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.passes.memory.access import reads
from ptxc.passes.slice.alias_rules import alias_classes
from ptxc.passes.memory.regions import region_name


def static_size(fn) -> int:
    """Instructions in the function's text (phis are not instructions)."""
    return sum(1 for ins in fn.instructions() if not ins.is_phi)


def slice_size(fn) -> int:
    return sum(1 for ins in fn.instructions() if not ins.is_phi and ins.attrs.get("slice"))


def control_inputs(instrs, program, regions_of, kernel=None, owner=None) -> dict:
    """Special registers, kernel parameters and memory regions read by ``instrs``."""
    special, params, memory, functions = set(), set(), set(), set()
    for ins in instrs:
        fn = ins.block.function
        functions.add(fn.name)
        for v in ins.operand_values():
            if isinstance(v, ir.SpecialReg):
                special.add(v.name)
        for acc in reads(ins) if ins.info is not None and ins.info.reads_mem else ():
            if acc.space == "param":
                params.update(_param_names(ins, acc, program, kernel))
            elif ins.opcode != "call":
                region = regions_of(fn).region(ins, acc.addr, acc.space)
                memory.add(f"{acc.space}:{region_name(region)}")
    order = [p.name for p in kernel.params] if kernel is not None else []
    return {
        "special": sorted(special),
        "params": [p for p in order if p in params],
        "memory": sorted(memory),
        "functions": sorted(functions - {(kernel or owner).name}) if kernel or owner else [],
    }


def _param_names(ins, acc, program, kernel) -> list[str]:
    if kernel is None or ins.block.function is not kernel:
        return []
    base = acc.addr.base if acc.addr is not None else None
    if not isinstance(base, ir.Sym):
        return [p.name for p in kernel.params]
    var = program.resolve(ins, base.name)
    return [var.name] if any(var is p for p in kernel.params) else []


def inputs_sentence(inputs: dict) -> str:
    """'%tid.x, param n, memory global:param a' (or 'nothing')."""
    parts = list(inputs["special"]) + [f"param {p}" for p in inputs["params"]]
    parts += [f"memory {m}" for m in inputs["memory"]]
    return ", ".join(parts) if parts else "constants only"


def function_report(fn, inputs: dict, options: dict) -> dict:
    n, k = static_size(fn), slice_size(fn)
    return {
        "kernel": fn.is_kernel,
        "static_inst": n,
        "slice_inst": k,
        "slice_fraction": round(k / n, 6) if n else 0.0,
        "memory": options["memory"],
        "criteria": options["criteria"],
        "addresses": options.get("addresses", False),
        "faults": options.get("faults", "unchecked"),
        "control_inputs": inputs,
    }


def memory_text(name: str, r: dict, alias=None) -> str:
    """'conservative', or for memory=launch the allocation classes of the
    kernel in ``alias`` (the variant's option)."""
    if r["memory"] != "launch" or not r["kernel"]:
        return r["memory"]
    classes = alias_classes(alias, name)
    if classes is None:
        return "launch (no launch: conservative)"
    groups: dict = {}
    for param, cls in classes.items():
        groups.setdefault(cls, []).append(param)
    text = " ".join("{" + ", ".join(ps) + "}" for ps in groups.values()) or "none"
    return f"launch (pointer parameters by allocation: {text})"


def render_text(reports: dict, alias=None) -> str:
    lines = []
    for name, r in reports.items():
        kind = "kernel" if r["kernel"] else "func"
        lines.append(f"slice {kind} @{name}: {r['slice_inst']}/{r['static_inst']} instructions "
                     f"({100 * r['slice_fraction']:.1f}%), memory={memory_text(name, r, alias)}, "
                     f"criteria={r['criteria']}"
                     + (", addresses=true" if r.get("addresses") else "")
                     + (", faults=checked" if r.get("faults") == "checked" else ""))
        subject = {"branches": "control flow", "effects": "control flow, guards and stores"}.get(
            r["criteria"], "control flow and guards")
        lines.append(f"  {subject} depend only on: {inputs_sentence(r['control_inputs'])}")
        if r["control_inputs"]["functions"]:
            lines.append(f"  through functions: {', '.join(r['control_inputs']['functions'])}")
    total = sum(r["static_inst"] for r in reports.values())
    kept = sum(r["slice_inst"] for r in reports.values())
    frac = 100 * kept / total if total else 0.0
    lines.append(f"slice total: {kept}/{total} instructions ({frac:.1f}%)")
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ("function", "kernel", "static_inst", "slice_inst", "slice_fraction", "memory",
               "criteria", "special", "params", "memory_regions", "functions")


def render_csv(reports: dict) -> str:
    """One row per function; list cells are space-separated."""
    import csv
    import io
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for name, r in reports.items():
        ci = r["control_inputs"]
        w.writerow([name, int(r["kernel"]), r["static_inst"], r["slice_inst"],
                    r["slice_fraction"], r["memory"], r["criteria"], " ".join(ci["special"]),
                    " ".join(ci["params"]), " ".join(ci["memory"]), " ".join(ci["functions"])])
    return buf.getvalue()
