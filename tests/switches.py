"""Run the same check under each setting of a code generator's switch
(PTXC_INLINE_SHAPES, PTXC_UNIFORM_LOADS, PTXC_AGG_ATOMICS ...): the tests
compare the results of the new code and the code it replaced."""
from __future__ import annotations


def each_setting(monkeypatch, var: str, values, run) -> list:
    """[``run()`` with ``var`` set to each of ``values``], the on-disk object
    cache off (so that each setting compiles its own code; ``run`` loads a
    fresh module for the same reason)."""
    out = []
    for value in values:
        monkeypatch.setenv(var, value)
        monkeypatch.setenv("PTXC_CACHE", "0")
        out.append(run())
    return out
