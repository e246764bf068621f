"""CTA equivalence on the shared corpus (skipped when it is absent).

* XLA kernels with hand-derived class counts (linear-index bounds checks
  built with ``or`` of shifted %ctaid and %tid, and an unrolled grid-stride
  loop whose trip count is constant but whose inner test depends on %ctaid).
* A deterministic sample of corpus kernels launched with arbitrary arguments:
  the reduced hybrid run and the hybrid run of every CTA give the same
  counters, or fail with the same message (errors are part of exactness).
* The same with tiny evaluation chunks, so that classes are merged across
  chunks.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

import ptxc
from corpus import CORPUS, corpus_files
from ptxc.errors import PtxcError
from ptxc.launcher.args import addr_bits, is_pointer_param
from ptxc.launcher.api import launch

XLA = CORPUS / "xla" / "module_0000.ptx"
pytestmark = pytest.mark.skipif(not XLA.is_file(), reason=f"shared corpus not found at {CORPUS}")


@pytest.fixture(scope="module")
def xla():
    return ptxc.load(str(XLA))


def both(module, kernel, grid, block, args, **kw):
    runs = []
    for eq in (True, False):
        try:
            p = launch(module, kernel, grid, block, list(args), cta_equivalence=eq, **kw)
            runs.append(("ok", p.counters(), p.ctas_run, p.cta_equivalence))
        except PtxcError as e:
            runs.append(("error", str(e), None, None))
    (a, x, run, note), (b, y, _, _) = runs
    assert (a, x) == (b, y), note
    return run, note


@pytest.mark.parametrize("grid, classes", [
    # r1 = ctaid << 10 | tid << 2 (256 threads: 4 elements each), r1 < 25088:
    # CTAs 0..23 end at 23*1024 + 1020 = 24572 (all in), CTA 24 spans
    # 24576..25596 (split), CTAs 25.. start at 25600 (all out)
    (25, 2), (30, 3), (24, 1)])
def test_xla_bounds_check(xla, grid, classes):
    run, note = both(xla, "fusion_12", grid, None, [], check_faults=False)   # no buffers
    assert run == classes, note


def test_xla_unrolled_loop(xla):
    """copy_99 (128 threads, 4 elements each): r1 = ctaid << 9 | tid << 2;
    the loop runs k = 0..3 for every thread (r51 = -655360 + 655360 k, exit
    when r51 + 655360 >= 1703936); the body runs while r1 + 655360 k <
    2359296. Over k = 0..3: k = 0, 1 always true (r1 <= 1703932); k = 2 true
    iff ctaid < 2048; k = 3 true iff ctaid < 768. Three classes: ctaid < 768,
    768 <= ctaid < 2048, ctaid >= 2048."""
    run, note = both(xla, "copy_99", 3328, None, [], check_faults=False)
    assert run == 3, note


def sample_kernels(every: int = 11, max_bytes: int = 300_000):
    """Every ``every``-th kernel of the corpus files below ``max_bytes`` (a
    fixed, spread-out sample that parses in a few seconds)."""
    out, n = [], 0
    for f in corpus_files():
        if f.stat().st_size > max_bytes:
            continue
        try:
            m = ptxc.load(str(f))
        except PtxcError:
            continue
        for k in m.kernels:
            if n % every == 0:
                out.append((m, k))
            n += 1
    return out


def arbitrary_args(k, rng):
    bits = addr_bits(k)
    args = []
    for p in k.params:
        if p.dims:
            args.append(bytes(p.size))
        elif is_pointer_param(p, bits):
            args.append(np.zeros(1 << 14, np.uint8))
        elif p.type.startswith("f"):
            args.append(1.5)
        else:
            args.append(rng.choice([0, 1, 7, 100, 1000, 5000]))
    return args


@pytest.fixture(scope="module")
def sample():
    return sample_kernels()


def run_sample(sample):
    reduced = 0
    for m, k in sample:
        rng = random.Random(len(k.name))
        block = k.reqntid or (rng.choice([32, 64, 96]), rng.choice([1, 2]), 1)
        if np.prod(block) > 1024:
            continue
        grid = (rng.choice([5, 9, 17]), rng.choice([1, 3]), 1)
        run, _ = both(m, k, grid, block, arbitrary_args(k, rng), max_steps=20000, threads=1)
        reduced += run is not None and run < np.prod(grid)
    return reduced


def test_corpus_sample(sample):
    assert len(sample) > 40
    assert run_sample(sample) > len(sample) // 3


def test_corpus_sample_small_chunks(sample, monkeypatch):
    from ptxc.passes.cta import classes as cta_classes
    monkeypatch.setattr(cta_classes, "CHUNK", 3)
    monkeypatch.setattr(cta_classes, "EXACT_CHUNK", 64)
    assert run_sample(sample[::3]) > 0
