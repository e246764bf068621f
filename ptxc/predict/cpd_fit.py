"""Fitting Luo & Suda's CPD parameters a, b, c, d to measured CPDs (section 3.4).

The CPD sub-model (Luo & Suda 2011, section 3.4) gives the computation
parallel degree of N_act active warps for a kernel whose computation
instruction proportion is P:

  CPD1 = (c - P) (N_act - b) + a                                  (3)
  CPD2 = (n / (m - 1)) sqrt((m - 1)^2 - (N_act - m)^2) + a        (4)
  n    = d (P - c)^2                                              (5)
  CPD  = min{CPD1, CPD2}  (the ``min`` reading; the default ``regime``
         reading takes CPD2 where P >= c, docs/predict.md "Readings")

a, b, c and d are "empirical parameters which get from each specific GPU
device" by a micro-benchmark (GTX 260: 3, 11, 0.5, 80); m is the most warps
an SM holds. ``ptxc calibrate`` measures CPD at many (N_act, P)
(ptxc/predict/calibrate.py) and :func:`fit` finds the four parameters that
minimise the squared error of that CPD:

* For a fixed c both branches are linear in the others:
  eq. (3) is  CPD - (c - P) N_act = a + (P - c) b,  eq. (4)-(5) is
  CPD = a + d x  with  x = (P - c)^2 sqrt((m - 1)^2 - (N_act - m)^2) / (m - 1).
  Given which branch is the smaller one at each point, one linear least
  squares over all points gives a, b and d (a is shared by both branches).
* Which branch is the minimum depends on the parameters, so the assignment
  and the linear fit alternate until the assignment no longer changes
  (started from the paper's GTX 260 values; at most 50 rounds).
* c is searched on a grid over [0, 1] (step 0.005), then refined by golden
  section around the best grid point; the objective is the squared error
  of the true CPD.

Noise-free data generated from the equations give back the parameters that
generated them (tests/test_calibrate.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ptxc.errors import PtxcError

from . import luo_suda

DEFAULT_RULE = luo_suda.Readings().cpd
PAPER = (3.0, 11.0, 0.5, 80.0)       # a, b, c, d on the GTX 260 (section 3.4)


def cpd1(n_act, p, a, b, c):
    """Eq. (3) (:func:`.luo_suda.cpd1`, on arrays too)."""
    return luo_suda.cpd1(p, n_act, a, b, c)


def ellipse(n_act, m):
    """sqrt((m - 1)^2 - (N_act - m)^2) / (m - 1): the shape of eq. (4), 0 at
    N_act = 1, 1 at N_act = m (0 outside [1, 2m - 1], where the root is imaginary)."""
    n_act = np.asarray(n_act, float)
    return np.sqrt(np.maximum((m - 1) ** 2 - (n_act - m) ** 2, 0.0)) / (m - 1)


def cpd2(n_act, p, a, c, d, m):
    """Eq. (4) with n of eq. (5) (:func:`.luo_suda.cpd2_n`)."""
    return luo_suda.cpd2_n(p, c, d) * ellipse(n_act, m) + a


def on_cpd1(n_act, p, a, b, c, d, m, rule=DEFAULT_RULE):
    """Where CPD is eq. (3): the smaller branch, and under the ``regime``
    reading (docs/predict.md, :class:`.luo_suda.Readings`) only where P < c."""
    smaller = cpd1(n_act, p, a, b, c) <= cpd2(n_act, p, a, c, d, m)
    return smaller & (np.asarray(p, float) < c) if rule == "regime" else smaller


def cpd(n_act, p, a, b, c, d, m, rule=DEFAULT_RULE):
    """CPD of section 3.4 under the reading ``rule`` ("regime" or "min")."""
    return np.where(on_cpd1(n_act, p, a, b, c, d, m, rule),
                    cpd1(n_act, p, a, b, c), cpd2(n_act, p, a, c, d, m))


@dataclass
class Fit:
    a: float
    b: float
    c: float
    d: float
    rms: float          # root-mean-square error of the fitted CPD, CPD units
    points: int
    on_cpd1: int        # points where CPD1 is the minimum at the fit

    def params(self) -> dict:
        return {"a": self.a, "b": self.b, "c": self.c, "d": self.d}


def _solve(n_act, p, y, c, m, on1):
    """Least squares of (a, b, d) for a fixed c and branch assignment."""
    x = (p - c) ** 2 * ellipse(n_act, m)
    rows = np.where(on1[:, None],
                    np.stack([np.ones_like(p), p - c, np.zeros_like(p)], 1),
                    np.stack([np.ones_like(p), np.zeros_like(p), x], 1))
    rhs = np.where(on1, y - (c - p) * n_act, y)
    theta, *_ = np.linalg.lstsq(rows, rhs, rcond=None)
    return theta


def _fit_c(n_act, p, y, c, m, start, rule):
    a, b, d = start
    on1 = None
    for _ in range(50):
        new = on_cpd1(n_act, p, a, b, c, d, m, rule)
        if on1 is not None and np.array_equal(new, on1):
            break
        on1 = new
        a, b, d = _solve(n_act, p, y, c, m, on1)
    err = float(np.sum((cpd(n_act, p, a, b, c, d, m, rule) - y) ** 2))
    return err, (a, b, d)


def fit(n_act, p, cpd_measured, m: int, start=PAPER, rule=DEFAULT_RULE) -> Fit:
    """a, b, c, d of eqs. (3)-(5) from measured CPDs at (N_act, P) points, CPD
    read as ``rule`` (the ``cpd`` reading: "regime" or "min")."""
    n_act, p, y = (np.asarray(v, float) for v in (n_act, p, cpd_measured))
    if not (n_act.shape == p.shape == y.shape) or n_act.ndim != 1:
        raise PtxcError("CPD fit: N_act, P and CPD must be equally long lists")
    if len(y) < 4 or len(set(p)) < 2 or len(set(n_act)) < 3:
        raise PtxcError("CPD fit needs at least 4 points, 2 proportions P and 3 warp counts")
    if m < 2 or not np.all(np.isfinite(y)):
        raise PtxcError("CPD fit: m must be at least 2 and every CPD finite")
    a0, b0, c0, d0 = start
    best = (math.inf, None, None)
    for c in np.linspace(0.0, 1.0, 201):
        err, abd = _fit_c(n_act, p, y, c, m, (a0, b0, d0), rule)
        if err < best[0]:
            best = (err, c, abd)
    lo, hi = max(0.0, best[1] - 0.005), min(1.0, best[1] + 0.005)
    g = (math.sqrt(5) - 1) / 2
    for _ in range(40):                      # golden section on c
        c1, c2 = hi - g * (hi - lo), lo + g * (hi - lo)
        e1, _ = _fit_c(n_act, p, y, c1, m, best[2], rule)
        e2, _ = _fit_c(n_act, p, y, c2, m, best[2], rule)
        if e1 < e2:
            hi = c2
        else:
            lo = c1
    c = (lo + hi) / 2
    err, abd = _fit_c(n_act, p, y, c, m, best[2], rule)
    if err > best[0]:
        err, c, abd = best
    a, b, d = (float(v) for v in abd)
    on1 = int(np.sum(on_cpd1(n_act, p, a, b, c, d, m, rule)))
    return Fit(a, b, float(c), d, math.sqrt(err / len(y)), len(y), on1)
