"""Shared checks of the CTA-equivalence launch tests (test_cta_fault_loops,
test_cta_countdown): a reduced hybrid run (one CTA per class) against the
hybrid run of every CTA and the full run, for counters and for the message
of the first fault."""
from __future__ import annotations

import pytest

import ptxc
from ptxc.launcher.api import launch


def three_runs(module, kernel, grid, block, make_args):
    """(reduced hybrid, full, the full run's arguments); every counter of
    the reduced run equals the hybrid run of every CTA and the full run."""
    reduced = launch(module, kernel, grid, block, make_args())
    every = launch(module, kernel, grid, block, make_args(), cta_equivalence=False)
    args = make_args()
    full = launch(module, kernel, grid, block, args, mode="full")
    assert reduced.counters() == every.counters() == full.counters()
    assert reduced.per_cta == full.per_cta
    assert every.ctas_run == full.ctas_run == reduced.ctas_launched
    return reduced, full, args


def error_of(module, kernel, grid, block, make_args, **kw) -> str:
    """The message of the launch's PtxcError (the launch must raise one)."""
    with pytest.raises(ptxc.PtxcError) as e:
        launch(module, kernel, grid, block, make_args(), **kw)
    return str(e.value)


def same_error(module, kernel, grid, block, make_args) -> str:
    """The full run's message; the reduced hybrid run and the hybrid run of
    every CTA stop with exactly the same one."""
    full = error_of(module, kernel, grid, block, make_args, mode="full")
    assert error_of(module, kernel, grid, block, make_args) == full
    assert error_of(module, kernel, grid, block, make_args, cta_equivalence=False) == full
    return full
