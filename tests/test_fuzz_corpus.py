"""The mutation fuzzer over the shared PTX corpus, in CI (issue 27).

Every mutant of a small corpus file (tests/fuzz/mutator.py: one mutation,
hostile tokens, another type on an opcode, another register) is parsed,
verified and emitted, and each of its kernels of at most 400 instructions is
launched for one CTA of 32 threads, full and hybrid, with a short step
budget. The contract: success or a PtxcError, never another exception; a
front-end error names its line and column; no message holds Python's own
text (``KeyError``, ``<ptxc.ir...>``, a traceback), which only a bug puts
there. The seed is fixed and the run bounded by BUDGET seconds (about 250
inputs on a 2-core machine); a failure prints its index, and
``python tests/fuzz/mutator.py INDEX+1 27 ../shared/corpus --launch``
reproduces it. Skipped when the corpus is absent.
"""
from __future__ import annotations

import os
import time

import pytest

from corpus import CORPUS
from fuzz import mutator

SEED = 27
BUDGET = 40.0          # seconds of fuzzing
MIN_INPUTS = 20        # even a slow machine gets through this many


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared PTX corpus not found at {CORPUS}")
def test_fuzz_corpus_parse_verify_launch(monkeypatch):
    monkeypatch.setenv("PTXC_CACHE", "0")          # no fuzz kernels in the object cache
    files = mutator.small_files(str(CORPUS))
    assert files, "no small PTX file in the corpus"
    stats: dict = {}
    deadline = time.monotonic() + BUDGET
    problems = []
    for i, path, _, problem in mutator.campaign(100_000, SEED, files, launch=True,
                                                 deadline=deadline, stats=stats):
        problems.append(f"#{i} {os.path.relpath(path, CORPUS)}: {problem}")
    assert stats.get("inputs", 0) >= MIN_INPUTS
    assert problems == [], "\n".join(problems[:10])
