"""What LLVM's machine-code generation costs per kernel, by code generator
option and by IR construct (issue 25, "Compile time").

Step 1 (``--dump DIR``): the LLVM IR text of every kernel of tests/apps as
``ptxc run --mode full`` compiles it (nvcc -ptx -arch=sm_90 -O3, level 0
text, one module per kernel: jit.compile_kernel's text) is written to DIR,
one .ll per kernel.
Step 2 (default): for each configuration (llc options given to
``llvmlite.binding.set_option`` plus a codegen level) a fresh worker process
parses each .ll and times level 0's IR passes (jit._promote, at codegen
level 0) and ``emit_object`` (best of --repeat); the
configurations are interleaved round by round, so load changes hit all of
them alike. Prints per-configuration totals and ratios to the first one.
``--fallbacks`` counts the instructions FastISel gave to SelectionDAG
(``-fast-isel-report-on-fallback -pass-remarks-missed=isel``) by opcode and
result type, and the IR instructions of each kind.

``--against DIR2`` times the first configuration on two dumps (e.g. this
tree and PTXC_INLINE_SHAPES=1), interleaved.

Usage: python bench/isel_options.py --dump /tmp/ir
       python bench/isel_options.py /tmp/ir --repeat 3 [--fallbacks]
       PTXC_INLINE_SHAPES=1 python bench/isel_options.py --dump /tmp/ir_inline
       python bench/isel_options.py /tmp/ir --against /tmp/ir_inline --rounds 3
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {   # name: (codegen level, llc options)
    "O0 (FastISel, fast RA)": (0, []),
    "O0 SelectionDAG": (0, ["-fast-isel=false"]),
    "O0 GlobalISel": (0, ["-global-isel", "-global-isel-abort=0"]),
    "O0 greedy RA": (0, ["-regalloc=greedy"]),
    "O1 codegen": (1, []),
    "O1 FastISel": (1, ["-fast-isel"]),
}


def dump(out: Path) -> None:
    os.environ["PTXC_CACHE"] = "0"
    import ptxc
    from ptxc.backends.llvm import jit
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ptxc-isel-") as tmp:
        for cu in sorted((ROOT / "tests" / "apps").glob("*/*.cu")):
            ptx = Path(tmp) / (cu.stem + ".ptx")
            subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-O3", str(cu), "-o", str(ptx)], check=True)
            module = ptxc.parse(ptx.read_text(), cu.name)
            for i, fn in enumerate(module.kernels):      # the IR text `ptxc run` compiles
                text = jit.compile_kernel(module, fn, "full", 0, keep_ir=True).ir_text
                (out / f"{cu.stem}.{i}.ll").write_text(text)


def worker(folder: Path, level: int, options: list, repeat: int, remarks: bool) -> None:
    import llvmlite.binding as b
    b.initialize_native_target()
    b.initialize_native_asmprinter()
    for o in options:
        b.set_option("ptxc", o)
    target = b.Target.from_default_triple()
    cpu, feats = b.get_host_cpu_name(), b.get_host_cpu_features().flatten()
    res = {}
    for ll in sorted(folder.glob("*.ll")):
        text, best = ll.read_text(), float("inf")
        for _ in range(1 if remarks else repeat):
            mod = b.parse_assembly(text)
            tm = target.create_target_machine(cpu=cpu, features=feats, opt=level,
                                              codemodel="jitdefault", jit=True)
            t0 = time.perf_counter()
            if level == 0:              # level 0's IR passes, as jit._emit runs them
                promote(mod)
            tm.emit_object(mod)
            best = min(best, time.perf_counter() - t0)
        res[ll.stem] = best
        if remarks:
            print(f"@@file {ll.stem}", file=sys.stderr, flush=True)
    print(json.dumps(res))


def promote(mod) -> None:
    from ptxc.backends.llvm import jit, local_regs
    if local_regs.enabled():
        jit._promote(mod)


def run_config(folder, level, options, repeat, remarks=False):
    cmd = [sys.executable, __file__, str(folder), "--worker", str(level), "--repeat", str(repeat)]
    cmd += [f"--opt={o}" for o in options]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return None, p.stderr[-400:]
    return json.loads(p.stdout.splitlines()[-1]), p.stderr


MISSED = re.compile(r"FastISel missed(?: call| terminator)?:\s+(.*?) \(in function: (\S+)\)")


def kind(instr: str) -> str:
    """'opcode type' of one IR instruction as a remark prints it."""
    rhs = instr.split(" = ", 1)[-1].strip()
    words = rhs.split()
    op = words[0]
    if op in ("tail", "call"):
        m = re.search(r"@([\w.]+)", rhs)
        name = re.sub(r"[.]v?\d+[if]\d+.*|[.]i\d+$", "", m.group(1)) if m else "?"
        return f"call {name}"
    vec = re.search(r"<(\d+) x (\w+)>", rhs)
    return f"{op} <{vec.group(1)} x {vec.group(2)}>" if vec else f"{op} scalar"


def fallbacks(folder: Path) -> None:
    _, err = run_config(folder, 0, ["-fast-isel-report-on-fallback", "-pass-remarks-missed=isel"], 1,
                        remarks=True)
    by_kind = collections.Counter(kind(m.group(1)) for m in MISSED.finditer(err))
    print("instructions FastISel gave to SelectionDAG (all kernels), by kind:")
    for k, n in by_kind.most_common(25):
        print(f"  {n:>7}  {k}")
    counts = collections.Counter()
    for ll in folder.glob("*.ll"):
        for line in ll.read_text().splitlines():
            s = line.strip()
            if s and not s.endswith(":") and not s.startswith(("define", "declare", "}", ";", "@", "attributes")):
                counts["vector" if "<" in s.split(";")[0] else "scalar"] += 1
    print(f"IR lines: {counts['scalar']} scalar, {counts['vector']} with a vector type")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?")
    ap.add_argument("--dump")
    ap.add_argument("--worker", type=int)
    ap.add_argument("--opt", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--configs", default="", help="comma-separated prefixes of CONFIGS names")
    ap.add_argument("--fallbacks", action="store_true")
    ap.add_argument("--against", help="a second IR folder: the first configuration on both, interleaved")
    o = ap.parse_args()
    if o.dump:
        return dump(Path(o.dump))
    folder = Path(o.folder)
    if o.worker is not None:
        return worker(folder, o.worker, o.opt, o.repeat, "-pass-remarks-missed=isel" in o.opt)
    if o.fallbacks:
        return fallbacks(folder)
    names = [n for n in CONFIGS if not o.configs or any(n.startswith(p) for p in o.configs.split(","))]
    runs = [(n, folder, CONFIGS[n]) for n in names]
    if o.against:               # the same configuration on the IR of another tree (or switch)
        runs = [(f"{n} {d}", Path(d), CONFIGS[n]) for d in (str(folder), o.against) for n in names[:1]]
    best: dict = {}
    for _ in range(o.rounds):
        for n, where, cfg in runs:
            res, err = run_config(where, *cfg, o.repeat)
            if res is None:
                print(f"{n}: failed: {err}")
                continue
            cur = best.setdefault(n, res)
            for k, v in res.items():
                cur[k] = min(cur[k], v)
    base = best[runs[0][0]]
    print(f"emit_object seconds, {len(base)} kernels, best of {o.rounds}x{o.repeat}")
    top = sorted(base, key=base.get, reverse=True)[:8]
    print(f"{'config':<26}{'total':>8}{'ratio':>7}" + "".join(f"{k[:13]:>14}" for k in top))
    for n, r in best.items():
        tot = sum(r.values())
        print(f"{n:<26}{tot:>8.3f}{tot / sum(base.values()):>7.2f}" + "".join(f"{r[k]:>14.4f}" for k in top))


if __name__ == "__main__":
    main()
