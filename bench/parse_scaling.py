"""Parse time and memory against input size: initializer lists and code.

For each shape, two inputs (N and 4N) are parsed in a fresh process each;
the report gives CPU seconds, peak RSS and the time ratio (4.0 = linear).
Shapes: a `.global .b8` initializer of N decimal bytes (one INITLIST
token, ptxc/frontend/lexer.py), the same list with a comment inside (the grammar
path, for comparison), and N copies of the shipped example kernel
(examples/branchy.ptx) under renamed entries.

    python bench/parse_scaling.py [N]          # default N = 250000 values / 100 copies
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
CHILD = r"""
import json, resource, sys, time, ptxc
text = open(sys.argv[1]).read()
ptxc.parse(".version 8.0\n.target sm_90\n.entry w() { ret; }\n", "warm")
t = time.process_time()
ptxc.parse(text, sys.argv[1])
print(json.dumps({"s": time.process_time() - t,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def initializer(n: int, comment: bool = False) -> str:
    vals = ", ".join(str((i * 37) % 256) for i in range(n))
    if comment:
        vals = "/* grammar path */ " + vals
    return HEADER + f".global .align 1 .b8 g[{n}] = {{{vals}}};\n.visible .entry k() {{ ret; }}\n"


def kernels(n: int) -> str:
    src = open(os.path.join(ROOT, "examples", "branchy.ptx")).read()
    head, _, body = src.partition(".visible .entry")
    body = ".visible .entry" + body
    return head + "".join(body.replace("vecadd_branchy", f"vecadd_branchy_{i}")
                          .replace("collatz_steps", f"collatz_steps_{i}") for i in range(n))


def measure(text: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, f.name], capture_output=True, text=True,
                             check=True)
        return {**json.loads(out.stdout), "mb": len(text) / 1e6}
    finally:
        os.unlink(f.name)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 250_000
    shapes = [("initializer (INITLIST)", lambda k: initializer(k)),
              ("initializer (grammar)", lambda k: initializer(k, True)),
              ("kernels", lambda k: kernels(k // 2500))]
    print(f"{'shape':24} {'size':>8} {'MB':>6} {'CPU s':>7} {'RSS MB':>7}")
    for name, make in shapes:
        rows = [measure(make(k)) for k in (n, 4 * n)]
        for k, r in zip((n, 4 * n), rows):
            print(f"{name:24} {k:8d} {r['mb']:6.2f} {r['s']:7.2f} {r['rss_mb']:7.0f}")
        print(f"{'':24} time ratio 4N/N: {rows[1]['s'] / max(rows[0]['s'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
