"""Machine instructions per parse (valgrind's Ir count): a parse-speed measure
that other jobs on a shared machine do not disturb.

Runs a child Python under ``valgrind --tool=callgrind`` twice: once parsing
the file once (warm-up: the grammar is loaded), once parsing it 1 + N times,
and prints (difference) / N. The garbage collector is off after the warm-up
and the hash seed fixed, so the count repeats to ~0.5% (times on this 2-core
machine vary by 5-10% between runs). Set PYTHONPATH to compare another copy
of ptxc (e.g. ``git archive main ptxc | tar -x -C /tmp/main``).

    python bench/parse_instructions.py [--repeat 2] [FILE]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CHILD = """
import gc, sys, ptxc
text = open(sys.argv[1]).read()
ptxc.parse(text)
gc.collect()
gc.disable()
for _ in range(int(sys.argv[2])):
    ptxc.parse(text)
"""


def instructions(path: Path, parses: int) -> int:
    """Ir of a child process that parses ``path`` 1 + ``parses`` times."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
           sys.executable, "-c", CHILD, str(path.resolve()), str(parses)]
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True,
                         cwd=tempfile.gettempdir()).stderr     # no ptxc/ in the current folder
    return int(re.search(r"I\s+refs:\s+([\d,]+)", out).group(1).replace(",", ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=CORPUS / "xla" / "module_0000.ptx")
    ap.add_argument("--repeat", type=int, default=2, help="parses counted (default 2)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind not found")
        return 1
    base = instructions(args.file, 0)
    per = (instructions(args.file, args.repeat) - base) / args.repeat
    print(f"{args.file.name}: {per / 1e6:.1f} M instructions per parse")
    return 0


if __name__ == "__main__":
    sys.exit(main())
