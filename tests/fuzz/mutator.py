"""A seeded mutation fuzzer for ptxc's front end (parser, IR builder, CFG).

Each input is a real PTX file (the shipped examples and the tests' nvcc
output) with one to three mutations: a token replaced by a hostile token
(malformed numbers, huge literals, registers or names where numbers go, deep
nesting, immediates as destinations ...), a token deleted or duplicated, a
line duplicated or deleted, or a byte inserted. The contract checked is the
one the README promises: every outcome is success or a :class:`PtxcError`
that names a location, never another exception.

Two more mutations aim at the ISA rules (ptxc.ir.isa_rules): a type word of
an opcode replaced by another type (``and.b32`` -> ``and.f32``), and a
register replaced by a register of another class of the same file.

``launch_outcome`` adds the run: every small kernel of a module that parses
is launched (one CTA of 32 threads, zero-filled buffers, a short step
budget); the contract then also forbids Python's own text in a message
(``KeyError``, ``<ptxc.ir...>``, a traceback), which only a bug puts there.
tests/test_fuzz_corpus.py runs both over the shared corpus with a fixed seed.

Run standalone for a longer campaign: ``python tests/fuzz/mutator.py N [seed
[folder]] [--launch]`` prints one input per class that breaks the contract
(``folder``: mutate the small PTX files under it instead, e.g. a corpus;
``--launch``: launch the small kernels too).
"""
from __future__ import annotations

import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Tokens known to have broken parsers (issue 18's two fuzzers) and their kin.
HOSTILE = [
    "0fZZ00000000", "3f80R000", "0f000000", "0fFFFFFFFFF", "0d1234", "0eC0000000",
    "0x", "0b2", "08", "6.5", "1e999", "-1e999", "1.", "9" * 5000, "0x" + "F" * 5000,
    "%rd1", "out_addr", "$L__BB0_1", "149", "-1", "12", "[p]", "[ .func p]", "[%rd1+%rd2]",
    "[6.5]", "{", "}", "(", ")", "{" * 1000, "(" * 2000, ";", ",", ":", ".extern", ".func",
    ".entry", ".reg", ".param", ".global", ".align", ".u32", ".b8", "bra", "bra.uni",
    "call", "ret", "@%p1", "@!", "<", ">", "=", "+", "|", "!", "\"s\"", "\x00", "\xff",
    "\u00e9", "//", "/*", "\n", "_", "%", "$",
]
_TOKEN = re.compile(r"[%$A-Za-z_.][\w$.:]*|-?\d[\w.]*|\S")


def seed_files() -> list[str]:
    """The shipped examples and the tests' compiler-made PTX (small files only)."""
    out = []
    for folder in ("examples", os.path.join("tests", "cuda"), os.path.join("tests", "occupancy")):
        base = os.path.join(ROOT, folder)
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            if name.endswith(".ptx") and os.path.getsize(path) < 8000:
                out.append(path)
    return out


TYPES = ["pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16",
         "s32", "s64", "f16", "f16x2", "bf16", "f32", "f64", "s16x2", "f32x2", "tf32"]
_TYPED = re.compile(r"\b[a-z][a-z0-9]*(?:\.[\w:]+)*\.(" + "|".join(TYPES) + r")\b")
_REG = re.compile(r"%[a-z]+[0-9]+")


def retype(text: str, rng: random.Random) -> str:
    """One type word of one instruction replaced by another type."""
    spans = [m.span(1) for m in _TYPED.finditer(text)]
    if not spans:
        return text
    a, b = rng.choice(spans)
    return text[:a] + rng.choice(TYPES) + text[b:]


def reregister(text: str, rng: random.Random) -> str:
    """One register operand replaced by a register of the file (maybe of another class)."""
    found = list(_REG.finditer(text))
    if len(found) < 2:
        return text
    m, other = rng.choice(found), rng.choice(found)
    return text[:m.start()] + other.group(0) + text[m.end():]


def mutate(text: str, rng: random.Random, most: int = 3) -> str:
    """``text`` with one to ``most`` random mutations."""
    for _ in range(rng.randint(1, most)):
        spans = [m.span() for m in _TOKEN.finditer(text)]
        a, b = rng.choice(spans)
        kind = rng.randrange(8)
        if kind == 6:
            text = retype(text, rng)
        elif kind == 7:
            text = reregister(text, rng)
        elif kind <= 2:
            text = text[:a] + rng.choice(HOSTILE) + text[b:]
        elif kind == 3:
            text = text[:a] + text[b:]
        elif kind == 4:
            text = text[:a] + text[a:b] + " " + text[a:b] + text[b:]
        else:
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            lines.insert(i, lines[rng.randrange(len(lines))]) if rng.random() < 0.5 else lines.pop(i)
            text = "\n".join(lines)
    return text


def outcome(text: str, name: str = "fuzz.ptx") -> str | None:
    """None when ``text`` parses (and its CFGs build) or fails with a located
    PtxcError; otherwise a description of the broken contract."""
    import ptxc
    try:
        module = ptxc.parse(text, name)
        ptxc.run_pipeline(module, "cfg,verify")
        module.to_ptx()
    except ptxc.PtxcError as err:
        if err.loc is None or err.loc.line < 1 or err.loc.col < 1:
            return f"unlocated error: {err.headline()[:200]}"
        if python_text(err.render()) is not None:
            return f"Python text {python_text(err.render())!r} in: {err.headline()[:200]}"
        if len(err.render()) > 2000:
            return f"error message of {len(err.render())} characters"
        return None
    except Exception as err:  # noqa: BLE001 - the contract under test
        return f"{type(err).__name__}: {str(err)[:200]}"
    return None


# Python's own text in a message: only a bug in ptxc puts it there.
PYTHON_TEXT = re.compile(r"<ptxc\.|object at 0x|Traceback|\b(?:KeyError|IndexError|AttributeError|"
                         r"TypeError|ValueError|StopIteration|ZeroDivisionError|AssertionError|"
                         r"RecursionError|OverflowError|UnboundLocalError|NameError)\b")
LAUNCH_MAX_INSTRS = 400        # kernels launched by launch_outcome: at most this many instructions
LAUNCH_STEPS = 2000            # block executions per warp


def python_text(message: str) -> str | None:
    """The Python text in an error message, or None."""
    m = PYTHON_TEXT.search(message)
    return m.group(0) if m else None


def launch_args(fn) -> list:
    """Arguments for one launch of ``fn``: zeroed 4 KiB buffers for the
    pointer parameters (64-bit, or .ptr), 4 for the others."""
    import numpy as np
    args = []
    for p in fn.params:
        if p.type in ("u64", "b64", "s64") or ".ptr" in " ".join(p.attrs):
            args.append(np.zeros(1024, np.uint32))
        else:
            args.append(4)
    return args


def launch_outcome(text: str, name: str = "fuzz.ptx") -> str | None:
    """outcome(), then a short launch of each small kernel of the module:
    None, or a description of the broken contract."""
    import ptxc
    problem = outcome(text, name)
    if problem is not None:
        return problem
    try:
        module = ptxc.parse(text, name)
    except ptxc.PtxcError:
        return None
    for fn in module.kernels:
        if sum(len(b.instrs) for b in fn.blocks) > LAUNCH_MAX_INSTRS:
            continue
        for mode in ("full", "hybrid"):
            try:
                ptxc.launch(module, fn, (1, 1, 1), (32, 1, 1), launch_args(fn), mode=mode,
                            max_steps=LAUNCH_STEPS, threads=1)
            except ptxc.PtxcError as err:
                found = python_text(err.render())
                if found is not None:
                    return f"Python text {found!r} in: {err.headline()[:200]}"
            except Exception as err:  # noqa: BLE001 - the contract under test
                return f"{type(err).__name__} in launch ({mode}): {str(err)[:200]}"
    return None


def campaign(count: int, seed: int = 0, files: list[str] | None = None, launch: bool = False,
             deadline: float | None = None, stats: dict | None = None):
    """Yield (index, source file, mutated text, problem) for each broken input
    (``launch``: launch_outcome; ``deadline``: a time.monotonic() to stop at;
    ``stats["inputs"]`` counts the inputs tried)."""
    import time
    rng = random.Random(seed)
    seeds = [(p, open(p, encoding="utf-8", errors="replace").read()) for p in files or seed_files()]
    check = launch_outcome if launch else outcome
    for i in range(count):
        if deadline is not None and time.monotonic() > deadline:
            return
        if stats is not None:
            stats["inputs"] = i + 1
        path, text = rng.choice(seeds)
        bad = mutate(text, rng, 1 if launch else 3)      # one mutation: more of them run
        problem = check(bad)
        if problem is not None:
            yield i, path, bad, problem


def small_files(folder: str, most: int = 30000) -> list[str]:
    """The PTX files under ``folder`` of at most ``most`` bytes, sorted."""
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs
                  if f.endswith(".ptx") and os.path.getsize(os.path.join(d, f)) <= most)


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--launch"]
    n = int(argv[0]) if len(argv) > 0 else 1000
    s = int(argv[1]) if len(argv) > 1 else 0
    extra = small_files(argv[2]) if len(argv) > 2 else None   # a folder of other PTX to mutate
    seen = {}
    for i, path, bad, problem in campaign(n, s, extra, launch="--launch" in sys.argv):
        key = re.sub(r"\d+", "N", problem)[:80]
        seen.setdefault(key, (i, path, problem))
    for key, (i, path, problem) in seen.items():
        print(f"#{i} {os.path.relpath(path, ROOT)}: {problem}")
    print(f"{len(seen)} classes", file=sys.stderr)
