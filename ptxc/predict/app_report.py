"""The predicted time of each launch of a CUDA application, and ``ptxc run
--topdown``: predicted time and TopDown per launch and per kernel
(docs/predict.md).

Per launch: :func:`ptxc.predict.analyse` on the launch's profile (the run
collects the memory counters), once per launch (:class:`LaunchPredictor`):
under ``ptxc run --clock model`` the server predicts each launch as it
completes (its modelled time goes to the shim's device clock and to the
run summary's GPU time, runtime/gpu_time.py), and ``--topdown`` reuses
those results. The result is kept on the LaunchRecord (``prediction``); a
launch the model cannot predict (a PtxcError) keeps the one-line reason
instead (``prediction_error``). Per kernel: the launches' predicted times
add up, and the TopDown slot counts (IPC x cycles of each node) add up
before they are divided by the summed slots (IPC_MAX x cycles), so a
kernel's fractions of IPC_MAX are slot-weighted over its launches and its
Level 1 still sums to 1 (eq. 4.1). A kernel is a (name, module) pair, as everywhere in the
run report (runtime/kernel_keys.py): JSON ``kernels`` is a list of rows
with ``kernel`` and ``module``.
"""
from __future__ import annotations

import json

from ptxc.errors import PtxcError

from . import analyse, render
from .render import TREE
from .topdown import LEVEL1, LEVEL2


class LaunchPredictor:
    """Predicts launches of one run on one GPU model; the registers of each
    module's kernels (ptxas, or ptxc's estimate) and the module's static
    costs (static_costs.ModuleCosts) are computed once per module."""

    def __init__(self, gpu_key: str):
        from ptxc.gpus.architecture import gpu
        self.gpu = gpu(gpu_key)
        self._params = None
        self._modules: dict = {}

    def params(self):
        """The GPU model's ModelParams (a PtxcError if it has none)."""
        from .params import load_params
        if self._params is None:
            self._params = load_params(self.gpu.key, None)
        return self._params

    def _module(self, module) -> tuple:
        """(module, {kernel: Registers}, ModuleCosts), kept by id (the module
        is held, so its id is not reused)."""
        from ptxc.gpus.kernel_resources import module_registers
        from .static_costs import ModuleCosts
        if id(module) not in self._modules:
            self._modules[id(module)] = (module, module_registers(module, module.to_ptx(),
                                                                  self.gpu.sm),
                                         ModuleCosts(module, self.params()))
        return self._modules[id(module)]

    def predict(self, rec) -> None:
        """Set ``rec.prediction`` (the result of :func:`ptxc.predict.analyse`)
        or ``rec.prediction_error`` (why the model cannot predict the launch),
        unless this GPU model's prediction is already there."""
        done = getattr(rec, "prediction", None)
        if done is not None and done["gpu"] == self.gpu.key:
            return
        rec.prediction, rec.prediction_error = None, None
        module = getattr(rec, "ptx_module", None)
        if module is None:
            rec.prediction_error = "the launch's module is not known"
            return
        try:
            _, regs, static = self._module(module)
            rec.prediction = analyse(module, rec.profile.model_view(), self.gpu.key, regs[rec.kernel],
                                     rec.shared_bytes, params=static.params, static=static)
        except PtxcError as e:
            rec.prediction_error = e.render().splitlines()[0].removeprefix("error: ")


def launch_results(launches, gpu_key: str) -> list:
    """[(LaunchRecord, result)] for every launch the model predicts (each
    predicted once: a launch the run already predicted keeps its result)."""
    predictor = LaunchPredictor(gpu_key)
    for rec in launches:
        predictor.predict(rec)
    return [(rec, rec.prediction) for rec in launches if rec.prediction is not None]


def not_predicted(launches) -> list:
    """[(LaunchRecord, reason)] of the launches the model could not predict."""
    return [(rec, rec.prediction_error) for rec in launches
            if getattr(rec, "prediction_error", None)]


def kernel_totals(results) -> dict:
    """{(kernel, module): {"launches", "seconds", "slots", "fractions"}} (module doc)."""
    out: dict = {}
    for rec, r in results:
        k = out.setdefault((r["kernel"], rec.module), {"launches": 0, "seconds": 0.0, "slots": 0.0,
                                         "slot_counts": dict.fromkeys(
                                             r["topdown"]["slot_counts"], 0.0)})
        k["launches"] += 1
        k["seconds"] += r["prediction"].seconds
        k["slots"] += r["topdown"]["slots"]
        for name, v in r["topdown"]["slot_counts"].items():
            k["slot_counts"][name] += v
    for k in out.values():
        k["fractions"] = {n: v / k["slots"] for n, v in k["slot_counts"].items()}
    return out


def text(results, missing=()) -> str:
    """The --topdown section; ``missing``: not_predicted(launches)."""
    from ptxc.report.kernel_names import labels
    lines = ["", "==PTXC== Predicted time and TopDown per kernel (modelled; docs/predict.md)"]
    totals = kernel_totals(results)
    if not totals:
        lines.append("  no launch to predict")
    readable = labels(totals)
    for name, k in totals.items():
        fr = k["fractions"]
        parts = "  ".join(f"{n} {100 * fr[n]:.1f}%" for n in LEVEL1)
        lines.append(f"  {readable[name]}: {k['launches']} launch(es), {k['seconds'] * 1e6:.3f} us; {parts}")
        lines.append("      " + "  ".join(f"{n} {100 * fr[n]:.1f}%" for n in LEVEL2))
    lines += [f"  launch {rec.id} ({rec.kernel}): not predicted: {why}" for rec, why in missing]
    return "\n".join(lines) + "\n"


def as_json(results, missing=()) -> dict:
    return {"launches": [{"id": rec.id, **render.as_json(r)} for rec, r in results],
            "kernels": [{"kernel": n, "module": m,
                         **{k: v for k, v in d.items() if k != "slot_counts"}}
                        for (n, m), d in kernel_totals(results).items()],
            "not_predicted": [{"id": rec.id, "kernel": rec.kernel, "module": rec.module,
                               "error": why} for rec, why in missing]}


def merge_json(summary: str, results, missing=()) -> str:
    """The run's JSON summary with a "predict" member added."""
    doc = json.loads(summary)
    doc["predict"] = as_json(results, missing)
    return json.dumps(doc, indent=2, default=str) + "\n"


def write_sqlite(path: str, results) -> None:
    """Tables predict / predict_periods / topdown (render.write_sqlite), keyed by
    the launch ids of the run's ``launches`` table."""
    import sqlite3
    con = sqlite3.connect(path)
    try:
        render._tables(con)
        for rec, r in results:
            render._rows(con, rec.id, r)
        con.commit()
    finally:
        con.close()


__all__ = ["LaunchPredictor", "launch_results", "not_predicted", "kernel_totals", "text", "as_json", "merge_json",
           "write_sqlite", "TREE"]
