"""A kernel's registers per thread and static shared memory, for occupancy.

Registers come from NVIDIA's assembler when ``ptxas`` is on PATH: ``ptxas -v
-arch=sm_XX FILE.ptx`` prints, per entry function, "Compiling entry function
'NAME' for 'sm_XX'" then "Used N registers" (ptxas documentation, option
--verbose). The architecture is the GPU model's; when ptxas cannot compile
for it (CUDA 13's ptxas has no sm_70; a PTX .target above the GPU's), the
PTX's own .target is used and the label says so.

Without ptxas the count is *estimated*: ptxc allocates no registers, so it
takes the kernel's ``.maxnreg`` when it has one (ptxas never exceeds it) and
otherwise 32 registers per thread, the figure the runtime shim reports
through cudaFuncGetAttributes (ptxc/runtime/modules.py NUM_REGS). The label
says "estimated" and which rule gave the number.

Static shared memory is the size of the kernel's .shared variables as the
executor lays them out (backends/llvm/plan.py Plan.shared_static).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from ptxc.errors import PtxcError

ESTIMATED_REGS = 32         # ptxc/runtime/modules.py NUM_REGS
_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_USED = re.compile(r"Used (\d+) registers")


@dataclass(frozen=True)
class Registers:
    count: int
    source: str              # "ptxas sm_90", "estimated: ..."


def ptxas_registers(ptx_text: str, arch: str, ptxas: str | None = None) -> dict | None:
    """{entry name: registers} from ``ptxas -v``, or None if ptxas fails."""
    ptxas = ptxas or shutil.which("ptxas")
    if ptxas is None:
        return None
    with tempfile.TemporaryDirectory(prefix="ptxc-occ-") as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as fh:
            fh.write(ptx_text)
        try:
            proc = subprocess.run([ptxas, "-v", f"-arch={arch}", src, "-o",
                                   os.path.join(tmp, "k.cubin")],
                                  capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return None
    if proc.returncode != 0:
        return None
    return parse_ptxas_verbose(proc.stdout + proc.stderr)


def parse_ptxas_verbose(text: str) -> dict:
    """{entry name: registers} from ptxas -v output."""
    out, current = {}, None
    for line in text.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = m.group(1)
            continue
        m = _USED.search(line)
        if m and current is not None:
            out[current] = int(m.group(1))
            current = None
    return out


def module_registers(module, ptx_text: str, gpu_sm: int) -> dict:
    """{kernel name: Registers} for every kernel of ``module``."""
    kernels = module.kernels
    found = _with_ptxas(module, ptx_text, gpu_sm)
    out = {}
    for fn in kernels:
        if found is not None and fn.name in found[0]:
            out[fn.name] = Registers(found[0][fn.name], found[1])
        elif _maxnreg(fn):
            out[fn.name] = Registers(_maxnreg(fn), "estimated: the kernel's .maxnreg "
                                     "(ptxas not available)")
        else:
            out[fn.name] = Registers(ESTIMATED_REGS, f"estimated: {ESTIMATED_REGS} per thread "
                                     "(ptxas not available; ptxc allocates no registers)")
    return out


def _maxnreg(fn) -> int | None:
    for d in fn.directives:
        if d[0] == ".maxnreg" and len(d) > 1:
            v = d[1]
            return int(v[0] if isinstance(v, (tuple, list)) else v)
    return None


def _with_ptxas(module, ptx_text: str, gpu_sm: int):
    if shutil.which("ptxas") is None:
        return None
    regs = ptxas_registers(ptx_text, f"sm_{gpu_sm}")
    if regs is not None:
        return regs, f"ptxas sm_{gpu_sm}"
    target = next((t for t in module.target if t.startswith("sm_")), None)
    if target and target != f"sm_{gpu_sm}":
        regs = ptxas_registers(ptx_text, target)
        if regs is not None:
            return regs, f"ptxas {target}, the PTX's target: ptxas cannot compile for sm_{gpu_sm}"
    return None


def static_shared(module, fn) -> int:
    """Bytes of .shared variables the kernel uses (the executor's layout)."""
    from ptxc.backends.llvm.plan import Plan
    try:
        return Plan(module, fn).shared_static
    except PtxcError as err:
        raise PtxcError(f"kernel '{fn.name}': cannot lay out its shared memory: "
                        f"{err.message}") from None
