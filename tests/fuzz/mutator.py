"""A seeded mutation fuzzer for ptxc's front end (parser, IR builder, CFG).

Each input is a real PTX file (the shipped examples and the tests' nvcc
output) with one to three mutations: a token replaced by a hostile token
(malformed numbers, huge literals, registers or names where numbers go, deep
nesting, immediates as destinations ...), a token deleted or duplicated, a
line duplicated or deleted, or a byte inserted. The contract checked is the
one the README promises: every outcome is success or a :class:`PtxcError`
that names a location, never another exception.

Run standalone for a longer campaign: ``python tests/fuzz/mutator.py N [seed
[folder]]`` prints one input per class that breaks the contract (``folder``:
mutate the small PTX files under it instead, e.g. a corpus).
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


def mutate(text: str, rng: random.Random) -> str:
    """``text`` with one to three random mutations."""
    for _ in range(rng.randint(1, 3)):
        spans = [m.span() for m in _TOKEN.finditer(text)]
        a, b = rng.choice(spans)
        kind = rng.randrange(6)
        if kind <= 2:
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
        if len(err.render()) > 2000:
            return f"error message of {len(err.render())} characters"
        return None
    except Exception as err:  # noqa: BLE001 - the contract under test
        return f"{type(err).__name__}: {str(err)[:200]}"
    return None


def campaign(count: int, seed: int = 0, files: list[str] | None = None):
    """Yield (index, source file, mutated text, problem) for each broken input."""
    rng = random.Random(seed)
    seeds = [(p, open(p, encoding="utf-8", errors="replace").read()) for p in files or seed_files()]
    for i in range(count):
        path, text = rng.choice(seeds)
        bad = mutate(text, rng)
        problem = outcome(bad)
        if problem is not None:
            yield i, path, bad, problem


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    s = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    extra = None
    if len(sys.argv) > 3:                       # a folder of other PTX to mutate (small files)
        extra = [os.path.join(d, f) for d, _, fs in os.walk(sys.argv[3]) for f in sorted(fs)
                 if f.endswith(".ptx") and os.path.getsize(os.path.join(d, f)) < 30000]
    seen = {}
    for i, path, bad, problem in campaign(n, s, extra):
        key = re.sub(r"\d+", "N", problem)[:80]
        seen.setdefault(key, (i, path, problem))
    for key, (i, path, problem) in seen.items():
        print(f"#{i} {os.path.relpath(path, ROOT)}: {problem}")
    print(f"{len(seen)} classes", file=sys.stderr)
