"""launcher/profile_tables.py: the static half of a launch's Profile is made
once per compiled kernel and gives every later launch exactly the Profile
that tables made afresh for it give (no counts carried between launches)."""
from __future__ import annotations

import os

import numpy as np
import ptxc
from ptxc.launcher import profile_tables

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "branchy.ptx")


def launch(m, n: int, seed: int):
    a = np.arange(512, dtype=np.float32)
    b = np.random.default_rng(seed).random(512, dtype=np.float32)
    return ptxc.launch(m, "vecadd_branchy", 4, 128, [a, b, np.zeros(512, np.float32), n],
                       mode="full", memory_counters=True)


def test_tables_are_made_once_and_give_fresh_results(monkeypatch):
    from ptxc.launcher import results, results_memory
    m = ptxc.load(EXAMPLE)
    real, made = profile_tables._make, []
    monkeypatch.setattr(profile_tables, "_make", lambda c: made.append(c) or real(c))
    runs = ((500, 0), (300, 1), (17, 2))
    cached = [launch(m, n, seed).to_dict() for n, seed in runs]
    assert len(made) == 1
    for mod in (results, results_memory):           # tables made afresh for each launch
        monkeypatch.setattr(mod, "tables", real)
    fresh = [launch(m, n, seed).to_dict() for n, seed in runs]
    assert len(made) == 1
    for got, want in zip(cached, fresh):
        got.pop("timings", None), want.pop("timings", None)
        assert got == want
    # the launches differ, so equal Profiles are not one launch's numbers repeated
    assert len({c["thread_inst_executed"] for c in cached}) == 3
    assert cached[0]["per_memory_instr"] != cached[2]["per_memory_instr"]
