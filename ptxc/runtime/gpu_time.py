"""The run summary's time table under ``ptxc run --clock model|host``
(docs/runtime.md, "The summary and the report").

``--clock model`` (the default of ``ptxc run``): a launch's time is its
modelled GPU time, Luo & Suda's prediction on the ``--gpu`` model
(docs/predict.md), computed once per launch as it completes
(ptxc/predict/app_report.py, ``LaunchPredictor``; the LaunchRecord's
``gpu_s``). The table's Time(%), Time, Avg, Min and Max are those times;
two more columns split ptxc's host time of the kernel's launches: Compile
(the JIT) and Run (the launches on the CPU). A launch the model cannot
predict has no GPU time: its kernel's times are ``-`` (never a made-up
number), and one note under the table per kernel and reason says why.

``--clock host``: the time columns are the host wall time of ptxc's
launches, JIT compilation included (what the summary showed before the
option existed), and are labelled so.

Report columns: ``gpu_s`` per launch; ``gpu_s``, ``gpu_avg_s``,
``gpu_min_s``, ``gpu_max_s`` and ``run_s`` per kernel. The GPU columns are
None (SQL NULL) under the host clock, and for a kernel with a launch the
model could not predict.
"""
from __future__ import annotations

CLOCKS = ("model", "host")
KERNEL_GPU_COLUMNS = ("gpu_s", "gpu_avg_s", "gpu_min_s", "gpu_max_s")
KERNEL_TEMPLATE = {"run_s": 0.0, **dict.fromkeys(KERNEL_GPU_COLUMNS, 0.0)}
HEAD = (f"{'Time(%)':>8}  {'Time':>11}  {'Calls':>6}  {'Avg':>11}  {'Min':>11}  {'Max':>11}  ")


def launch_gpu_s(r) -> float | None:
    """The modelled GPU seconds of launch ``r`` (None: host clock, or not predicted)."""
    return getattr(r, "gpu_s", None)


def kernel_columns(rs) -> dict:
    """The per-kernel time columns of the launches ``rs`` of one kernel."""
    out = {"run_s": sum(float(r.profile.timings.get("run", 0.0)) for r in rs)}
    times = [launch_gpu_s(r) for r in rs]
    if not times or any(t is None for t in times):
        out.update(dict.fromkeys(KERNEL_GPU_COLUMNS))
    else:
        out.update({"gpu_s": sum(times), "gpu_avg_s": sum(times) / len(times),
                    "gpu_min_s": min(times), "gpu_max_s": max(times)})
    return out


def fmt_time(s: float | None) -> str:
    """nvprof's units: s, ms, us; ``-`` for no time."""
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.4f}s"
    if s >= 1e-3:
        return f"{s * 1e3:.4f}ms"
    return f"{s * 1e6:.3f}us"


def time_lines(tag: str, kernels: list, readable: dict, meta: dict, groups: dict) -> list:
    """The summary's time table: its label, header and one row per kernel
    (``kernels``: report.kernel_rows; ``groups``: their launches), then the
    notes on launches without a GPU time."""
    if meta.get("clock") == "model":
        return model_lines(tag, kernels, readable, meta, groups)
    return host_lines(tag, kernels, readable)


def host_lines(tag: str, kernels: list, readable: dict) -> list:
    total = sum(k["wall_s"] for k in kernels) or 1.0
    lines = [f"{tag} Host time (--clock host): ptxc's launches on the CPU, JIT compilation "
             "included; not a GPU's time", HEAD + "Name"]
    for k in sorted(kernels, key=lambda k: -k["wall_s"]):
        lines.append(f"{100 * k['wall_s'] / total:7.2f}%  {fmt_time(k['wall_s']):>11}  "
                     f"{k['launches']:>6}  {fmt_time(k['wall_avg_s']):>11}  "
                     f"{fmt_time(k['wall_min_s']):>11}  {fmt_time(k['wall_max_s']):>11}  "
                     f"{readable[k['kernel'], k['module']]}")
    return lines


def model_lines(tag: str, kernels: list, readable: dict, meta: dict, groups: dict) -> list:
    gpu = meta.get("gpu_model") or meta.get("gpu")
    total = sum(k["gpu_s"] for k in kernels if k["gpu_s"] is not None)
    lines = [f"{tag} GPU time modelled on {gpu} (Luo & Suda; docs/predict.md); Compile and "
             "Run: ptxc's host time (JIT, CPU run)",
             HEAD + f"{'Compile':>11}  {'Run':>11}  Name"]
    for k in sorted(kernels, key=lambda k: (k["gpu_s"] is None, -(k["gpu_s"] or 0.0))):
        share = "-" if k["gpu_s"] is None or not total else f"{100 * k['gpu_s'] / total:.2f}%"
        lines.append(f"{share:>8}  {fmt_time(k['gpu_s']):>11}  {k['launches']:>6}  "
                     f"{fmt_time(k['gpu_avg_s']):>11}  {fmt_time(k['gpu_min_s']):>11}  "
                     f"{fmt_time(k['gpu_max_s']):>11}  {fmt_time(k['compile_s']):>11}  "
                     f"{fmt_time(k['run_s']):>11}  {readable[k['kernel'], k['module']]}")
    return lines + not_modelled_notes(tag, kernels, readable, groups)


def not_modelled_notes(tag: str, kernels: list, readable: dict, groups: dict) -> list:
    """One line per kernel and reason for the launches without a GPU time."""
    lines = []
    for k in kernels:
        rs = groups[k["kernel"], k["module"]]
        reasons: dict = {}
        for r in rs:
            if launch_gpu_s(r) is None:
                why = getattr(r, "prediction_error", None) or "no prediction"
                reasons.setdefault(why, []).append(r.id)
        for why, ids in reasons.items():
            which = (f"launch {ids[0]}" if len(ids) == 1 else
                     "launches " + ", ".join(map(str, ids[:3])) + (", ..." if len(ids) > 3 else ""))
            lines.append(f"{tag} -: {readable[k['kernel'], k['module']]}: {len(ids)} of "
                         f"{len(rs)} launch{'es' if len(rs) != 1 else ''} ({which}) not "
                         f"modelled: {why}")
    if lines and any(k["gpu_s"] is not None for k in kernels):
        lines.append(f"{tag} Time(%) is of the modelled kernels' time")
    return lines
