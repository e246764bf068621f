"""Process-level speed settings of the command line (docs/profile.md, "Speed"):
numpy's OpenBLAS gets one thread unless the user chose a number, and the CTA
loop is compiled at O0 when there is no object cache to keep it (O2 when it
is cached)."""
from __future__ import annotations

import os
import subprocess
import sys

SHOW_BLAS = "import os, ptxc.cli.main; print(os.environ['OPENBLAS_NUM_THREADS'])"

# Records the optimisation level of every object the JIT emits, then loads the CTA loop.
CTA_LOOP_LEVEL = """
from ptxc.backends.llvm import jit
levels = []
emit = jit._emit
def spy(text, level, names):
    levels.append((names, level))
    return emit(text, level, names)
jit._emit = spy
jit.runtime()
print(levels)
"""


def run_python(code: str, **env) -> str:
    full = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "PTXC_CACHE")}
    full.update(env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_openblas_gets_one_thread_unless_the_user_set_it():
    assert run_python(SHOW_BLAS) == "1"
    assert run_python(SHOW_BLAS, OPENBLAS_NUM_THREADS="3") == "3"


def test_cta_loop_at_o0_without_cache_and_o2_with_it(tmp_path):
    assert run_python(CTA_LOOP_LEVEL, PTXC_CACHE="0") == "[('run_ctas', 0)]"
    cache = str(tmp_path / "objects")
    assert run_python(CTA_LOOP_LEVEL, PTXC_CACHE="1", PTXC_CACHE_DIR=cache) == "[('run_ctas', 2)]"
    # the second process finds the O2 object in the cache and compiles nothing
    assert run_python(CTA_LOOP_LEVEL, PTXC_CACHE="1", PTXC_CACHE_DIR=cache) == "[]"
