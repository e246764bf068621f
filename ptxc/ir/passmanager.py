"""Passes, analyses and the pass manager (after LLVM's new pass manager and xDSL).

* An **analysis** computes a fact about one function (``compute(fn, am)``);
  the :class:`AnalysisManager` caches it per (analysis, function) and drops
  what a pass reports it did not preserve.
* A **pass** is a frozen dataclass with a class-level ``name`` and ``summary``;
  its options are dataclass fields, so ``slice{memory=noalias}`` sets the field
  ``memory``. ``run(module, am)`` returns a :class:`PassResult`: a report
  (text and JSON-able data) and the set of analyses it preserved.
* One flat registry (``ptxc.passes.registry``) maps pass names to their classes.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ptxc.errors import PtxcError

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
    """Base class of passes. Options are dataclass fields with defaults."""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def run(self, module, am: AnalysisManager) -> PassResult:
        raise NotImplementedError

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        return list(dataclasses.fields(cls))


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


# --------------------------------------------------------------- parsing

def parse_pipeline(spec: str) -> list[tuple[str, dict[str, str]]]:
    """'a,b{k=v,w=x},c' -> [('a', {}), ('b', {'k': 'v', 'w': 'x'}), ('c', {})]."""
    out: list[tuple[str, dict[str, str]]] = []
    i, n = 0, len(spec)
    while i < n:
        j = i
        while j < n and spec[j] not in ",{":
            j += 1
        name = spec[i:j].strip()
        opts: dict[str, str] = {}
        if j < n and spec[j] == "{":
            k = spec.find("}", j)
            if k < 0:
                raise PtxcError(f"unterminated '{{' in pass pipeline '{spec}'")
            for item in filter(None, (s.strip() for s in spec[j + 1:k].split(","))):
                key, eq, value = item.partition("=")
                opts[key.strip()] = value.strip() if eq else "true"
            j = k + 1
        if name:
            out.append((name, opts))
        elif opts:
            raise PtxcError(f"options without a pass name in pipeline '{spec}'")
        while j < n and spec[j] in ", ":
            j += 1
        i = j
    return out


def _convert(value: str, typ, pass_name: str, key: str):
    typ = typ if isinstance(typ, str) else getattr(typ, "__name__", str(typ))
    try:
        if "bool" in typ:
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if "int" in typ:
            return int(value, 0)
        if "float" in typ:
            return float(value)
    except ValueError:
        raise PtxcError(f"pass '{pass_name}': option '{key}' expects {typ}, got '{value}'") from None
    return value


def make_pass(name: str, opts: dict[str, str]) -> Pass:
    """Instantiate a registered pass from its name and string options."""
    from ptxc.passes.registry import get_pass_class, pass_names
    cls = get_pass_class(name)
    if cls is None:
        raise PtxcError(f"unknown pass '{name}'; known passes: {', '.join(pass_names())}")
    fields = {f.name: f for f in cls.options()}
    kwargs = {}
    for key, value in opts.items():
        f = fields.get(key.replace("-", "_"))
        if f is None:
            known = ", ".join(fields) or "none"
            raise PtxcError(f"pass '{name}' has no option '{key}'; its options: {known}")
        kwargs[f.name] = _convert(value, f.type, name, key)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise PtxcError(f"pass '{name}': {e}") from None


def run_pipeline(module, pipeline: str | list, verify_each: bool = False,
                 am: AnalysisManager | None = None, **options) -> PipelineResult:
    """Run a pass pipeline ('a,b{k=v}' or a list of Pass objects) on a module.

    ``options`` become ``am.options`` (e.g. a launch configuration for ``count``).
    With verify_each, the SSA verifier runs after every pass.
    """
    passes = ([make_pass(n, o) for n, o in parse_pipeline(pipeline)]
              if isinstance(pipeline, str) else list(pipeline))
    am = am or AnalysisManager(module)
    am.options.update(options)
    result = PipelineResult(module, am=am)
    for p in passes:
        r = p.run(module, am)
        am.invalidate(r.preserved)
        result.results.append(r)
        if verify_each:
            from ptxc.passes.verifier import verify_module
            verify_module(module)
    return result
