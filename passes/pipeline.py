"""Pass pipelines: parse ``'a,b{k=v},c'``, make the passes, run them in order.

Above every pass (after LLVM's lib/Passes/PassBuilder): ``make_pass`` finds a
pass by name in the registry (passes/registry.py) and sets its options from
strings; ``run_pipeline`` runs the passes on a module with one
AnalysisManager (ptxc.ir.passmanager), dropping what each pass did not
preserve, and the SSA verifier after each pass with ``verify_each``.
``ptxc.run_pipeline`` is the public entry point.
"""
from __future__ import annotations

from ptxc.errors import PtxcError
from ptxc.ir.passmanager import AnalysisManager, Pass, PipelineResult


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
