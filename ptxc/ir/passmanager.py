"""Passes, analyses and the pass manager (after LLVM's new pass manager and xDSL).

* An **analysis** computes a fact about one function (``compute(fn, am)``);
  the :class:`AnalysisManager` caches it per (analysis, function) and drops
  what a pass reports it did not preserve.
* A **pass** is a frozen dataclass with a class-level ``name`` and ``summary``;
  its options are dataclass fields, so ``slice{memory=noalias}`` sets the field
  ``memory``. ``run(module, am)`` returns a :class:`PassResult`: a report
  (text and JSON-able data) and the set of analyses it preserved.
* One flat registry (``ptxc.passes.registry``) maps pass names to their classes;
  ``ptxc.passes.pipeline`` parses a pipeline text and runs it (above every
  pass, as LLVM's PassBuilder). This module is what a pass needs to be written.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

ALL = frozenset({"*"})   # "preserves everything" (analysis passes)
NONE: frozenset = frozenset()


class Analysis:
    """A cached per-function fact. Subclasses set ``name`` and implement compute."""
    name: ClassVar[str] = ""

    @classmethod
    def compute(cls, fn, am: "AnalysisManager"):
        raise NotImplementedError


class AnalysisManager:
    """Caches analysis results per (analysis, function)."""

    def __init__(self, module):
        self.module = module
        self._cache: dict[tuple[type, int], Any] = {}
        self.options: dict[str, Any] = {}   # pipeline-wide settings (e.g. launch config)

    def get(self, analysis: type[Analysis], fn):
        key = (analysis, id(fn))
        if key not in self._cache:
            self._cache[key] = analysis.compute(fn, self)
        return self._cache[key]

    def cached(self, analysis: type[Analysis], fn):
        return self._cache.get((analysis, id(fn)))

    def invalidate(self, preserved: frozenset) -> None:
        if "*" in preserved:
            return
        self._cache = {k: v for k, v in self._cache.items() if k[0].name in preserved}


@dataclass
class PassResult:
    """What a pass returns: a report (text + data) and what it preserved."""
    name: str
    text: str = ""
    data: Any = None
    preserved: frozenset = ALL

    def to_json(self) -> Any:
        return self.data


@dataclass(frozen=True)
class Pass:
    """Base class of passes. Options are dataclass fields with defaults;
    ``values`` says what an option accepts ({option: the allowed values, or
    a phrase}), for ``ptxc passes -v`` (bool options: true|false)."""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    values: ClassVar[dict] = {}

    def run(self, module, am: AnalysisManager) -> PassResult:
        raise NotImplementedError

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        return list(dataclasses.fields(cls))

    @classmethod
    def allowed(cls, option: str) -> str:
        """What ``option`` accepts, as ``ptxc passes -v`` shows it."""
        v = cls.values.get(option)
        if isinstance(v, (tuple, list)):
            return "|".join(v)
        if v:
            return v
        f = next((f for f in cls.options() if f.name == option), None)
        return "true|false" if f is not None and f.type in (bool, "bool") else ""


@dataclass
class PipelineResult:
    """The module after the pipeline and every pass's report, in order."""
    module: Any
    results: list[PassResult] = field(default_factory=list)
    am: AnalysisManager | None = None

    def __getitem__(self, name: str) -> PassResult:
        for r in reversed(self.results):
            if r.name == name:
                return r
        raise KeyError(name)

    def text(self) -> str:
        return "".join(r.text if r.text.endswith("\n") or not r.text else r.text + "\n"
                       for r in self.results)

    def to_json(self) -> str:
        return json.dumps({r.name: r.to_json() for r in self.results}, indent=2, sort_keys=False)
