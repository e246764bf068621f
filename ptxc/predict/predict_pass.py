"""The ``predict`` pass: predicted time and TopDown of the count pass's launch.

    ptxc opt --pass='count,predict{gpu=a100}' --memory-counters --kernel K ... FILE.ptx

Reads the launch profile the count pass leaves in
``module.attrs['launch_profile']`` (it must run earlier in the pipeline,
with a launch and the memory counters) and applies Luo & Suda's model and
the TopDown breakdown (ptxc/predict/; docs/predict.md). Options: ``gpu``
(a GPU model, docs/gpus.md), ``params`` (a `ptxc calibrate` file),
``readings`` (other readings of the paper's equations, ``;``-separated:
``readings=eq2=printed;cpd=min``), ``topdown`` (print the TopDown too;
default true). Analysis only: preserves everything.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.errors import PtxcError
from ptxc.gpus.architecture import GPUS
from ptxc.ir.passmanager import ALL, Pass, PassResult


@dataclass(frozen=True)
class PredictPass(Pass):
    name = "predict"
    summary = "predicted time on a GPU model (Luo & Suda) and TopDown of the count pass's launch"
    gpu: str = "h100"
    params: str = ""
    readings: str = ""
    topdown: bool = True
    values = {"gpu": tuple(GPUS),
              "params": "a FILE.json written by ptxc calibrate",
              "readings": "NAME=VALUE;... of docs/predict.md, e.g. eq2=printed;cpd=min"}

    def run(self, module, am) -> PassResult:
        from ptxc.predict import analyse_launch, render
        prof = module.attrs.get("launch_profile")
        launch = am.options.get("launch")
        if not prof or not isinstance(launch, dict):
            raise PtxcError("the predict pass needs the count pass's launch earlier in the "
                            "pipeline (--pass=count,predict --kernel K --grid G --block B "
                            "--memory-counters)")
        readings = [x for x in self.readings.split(";") if x.strip()]
        r = analyse_launch(module, module.to_ptx(), prof, self.gpu, None,
                           launch.get("shared") or 0, self.params or None, readings)
        data = render.as_json(r)
        if not self.topdown:
            data.pop("topdown")
        return PassResult(self.name, render.text(r, self.topdown), data, ALL)
