"""The result of a launch: METRICS.md's counters, per block, per branch, per CTA.

Every attribute is named as in /work/shared/METRICS.md (and docs/launch.md):
totals (``inst_executed`` ...), ``per_block`` (``"function:block"`` ->
warp/thread executions), ``per_branch`` (SASSI's five numbers per conditional
branch) and ``per_cta`` (min / mean / max over CTAs of the instruction
counts). With ``memory_counters`` (collected only when the launch asked for
them), ``memory`` holds the launch's coalescing, bank-conflict and atomic
totals and ``per_memory_instr`` the same per memory instruction
(docs/metrics.md, "Memory access counters"). ``counters()`` gives the numbers
that a hybrid and a full run of the same launch must share. ``ctas_launched``
/ ``ctas_run`` say how many CTAs the grid has and how many the executor ran
(CTA equivalence, docs/cta-equivalence.md; ``cta_equivalence`` says why it
did or did not apply).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

TOTALS = ("inst_executed", "thread_inst_executed", "thread_inst_executed_pred_on", "branch",
          "cond_branch", "divergent_branch", "flop_count_sp", "flop_count_dp", "flop_count_hp",
          "flop_count_sp_special")
DERIVED = ("branch_efficiency", "warp_execution_efficiency")


@dataclass
class Profile:
    kernel: str
    mode: str
    grid: tuple
    block: tuple
    inst_executed: int = 0
    thread_inst_executed: int = 0
    thread_inst_executed_pred_on: int = 0
    branch: int = 0
    cond_branch: int = 0
    divergent_branch: int = 0
    flop_count_sp: int = 0
    flop_count_dp: int = 0
    flop_count_hp: int = 0
    flop_count_sp_special: int = 0
    static_inst: int = 0
    slice_fraction: float | None = None
    per_block: dict = field(default_factory=dict)
    per_branch: dict = field(default_factory=dict)
    per_cta: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    memory_counters: bool = False       # were the memory counters collected?
    memory: dict = field(default_factory=dict)
    per_memory_instr: dict = field(default_factory=dict)
    ctas_launched: int = 0
    ctas_run: int = 0
    cta_equivalence: str = ""
    printf: list = field(default_factory=list)   # device printf output, one str per call and lane (docs/launch.md)
    mem_errors: list | None = None      # memcheck launches: access_errors.MemcheckError list (docs/check.md)
    mem_error_count: int = 0            # their failing thread-accesses
    init_errors: list | None = None     # initcheck launches: access_errors.UninitRead list
    init_error_count: int = 0           # their uninitialised thread-reads
    race_hazards: list | None = None    # racecheck: hazard_reports.RaceReport list (docs/check.md)
    sync_errors: list | None = None     # synccheck: hazard_reports.SyncReport list
    value_profile: dict | None = None   # value-profiled launches: ptxc/valueprof/value_profile.py (docs/value-profile.md)
    # dynamic parallelism (docs/launch.md, "Device-side launches"): the grids this
    # launch's threads launched (ops/device_launch.DeviceLaunch, issue order); on the
    # host's launch, every grid of the tree run after it (Profiles in run order), and
    # on each of those the record that launched it, its parent's index in that list
    # (-1: the host's launch) and its nesting depth (1: launched by the host's grid)
    device_launch_records: list = field(default_factory=list)
    device_launches: list = field(default_factory=list)
    launched_by: object = None
    parent_index: int = -1
    depth: int = 0

    @property
    def branch_efficiency(self) -> float:
        if self.branch == 0:
            return 100.0
        return 100.0 * (self.branch - self.divergent_branch) / self.branch

    @property
    def warp_execution_efficiency(self) -> float:
        if self.inst_executed == 0:
            return 0.0
        return 100.0 * self.thread_inst_executed / (32 * self.inst_executed)

    def counters(self) -> dict:
        """Every dynamic counter (totals, per block, per branch, per CTA):
        what a hybrid run must reproduce exactly."""
        d = {k: getattr(self, k) for k in TOTALS}
        d["per_block"] = self.per_block
        d["per_branch"] = self.per_branch
        d["per_cta"] = self.per_cta
        if self.memory_counters:
            d["memory"] = self.memory
            d["per_memory_instr"] = self.per_memory_instr
        return d

    def to_dict(self) -> dict:
        d = {"kernel": self.kernel, "mode": self.mode, "grid": list(self.grid),
             "block": list(self.block)}
        d.update({k: getattr(self, k) for k in TOTALS})
        d.update({k: round(getattr(self, k), 6) for k in DERIVED})
        d["static_inst"] = self.static_inst
        d["slice_fraction"] = self.slice_fraction
        d["per_block"] = self.per_block
        d["per_branch"] = self.per_branch
        d["per_cta"] = self.per_cta
        d["ctas_launched"] = self.ctas_launched
        d["ctas_run"] = self.ctas_run
        d["cta_equivalence"] = self.cta_equivalence
        d["memory_counters"] = self.memory_counters
        if self.printf:
            d["printf"] = list(self.printf)
        if self.device_launches:
            d["device_launches"] = self.device_launch_rows()
        if self.mem_errors is not None:
            from ptxc.launcher.access_errors import memcheck_json
            d["memcheck"] = memcheck_json(self.mem_errors, self.mem_error_count)
        if self.init_errors is not None:
            from ptxc.launcher.access_errors import initcheck_json as init_json
            d["initcheck"] = init_json(self.init_errors, self.init_error_count)
        for tool, found in (("racecheck", self.race_hazards), ("synccheck", self.sync_errors)):
            if found is not None:
                from ptxc.launcher.hazard_reports import as_json as hazards_json
                d[tool] = hazards_json(tool, found)
        if self.value_profile is not None:
            from ptxc.launcher.value_profile import rows
            d["value_profile"] = {"summary": self.value_profile["summary"],
                                  "instructions": rows(self.value_profile)}
        if self.memory_counters:
            from ptxc.passes.count.memory_ranking import memory_rows
            d["memory"] = self.memory
            d["per_memory_instr"] = self.per_memory_instr
            d["memory_ranking"] = memory_rows(self.per_memory_instr,
                                              self.memory.get("shared_bank_bytes", 4))
        return d

    def model_view(self) -> dict:
        """The members of :meth:`to_dict` the execution-time model reads
        (ptxc.predict.analyse), without building the rest (the memory
        ranking, printf, checks' reports): it runs after every launch
        under ``ptxc run --clock model``."""
        d = {"kernel": self.kernel, "mode": self.mode, "grid": list(self.grid),
             "block": list(self.block), "inst_executed": self.inst_executed,
             "thread_inst_executed": self.thread_inst_executed, "per_block": self.per_block,
             "per_branch": self.per_branch, "memory_counters": self.memory_counters}
        if self.memory_counters:
            d["memory"] = self.memory
            d["per_memory_instr"] = self.per_memory_instr
        return d

    def device_launch_rows(self) -> list[dict]:
        """The grids launched from the device, in run order, as JSON-ready
        rows: configuration, stream, the launching grid (``parent``: its
        index in these rows, -1 for this launch), CTA and thread, and totals."""
        rows = []
        for child in self.device_launches:
            r = child.launched_by
            rows.append({"kernel": child.kernel, "grid": list(child.grid), "block": list(child.block),
                         "shared_bytes": r.shared, "stream": r.stream_name,
                         "parent": child.parent_index, "depth": child.depth,
                         "launching_cta": list(r.ctaid), "launching_thread": list(r.tid),
                         **{k: getattr(child, k) for k in TOTALS}})
            if child.printf:
                rows[-1]["printf"] = list(child.printf)
        return rows

    def to_json(self, **kw) -> str:
        kw.setdefault("indent", 2)
        return json.dumps(self.to_dict(), **kw)

    def summary(self) -> str:
        """A short human-readable report."""
        lines = [f"kernel {self.kernel} ({self.mode}) grid={tuple(self.grid)} block={tuple(self.block)}"]
        for k in TOTALS:
            lines.append(f"  {k:30s} {getattr(self, k)}")
        for k in DERIVED:
            lines.append(f"  {k:30s} {getattr(self, k):.2f}")
        lines.append(f"  {'static_inst':30s} {self.static_inst}")
        if self.slice_fraction is not None:
            lines.append(f"  {'slice_fraction':30s} {self.slice_fraction:.4f}")
        lines.append(f"  {'ctas_run':30s} {self.ctas_run} of {self.ctas_launched}"
                     + (f" ({self.cta_equivalence})" if self.cta_equivalence else ""))
        if self.memory_counters:
            lines += [f"  {k:30s} {v}" for k, v in self.memory.items() if not isinstance(v, list)]
        if self.value_profile is not None:
            from ptxc.launcher.value_profile import summary_lines
            lines += summary_lines(self.value_profile["summary"])
        if self.device_launches:
            lines.append(f"  {'device_launches':30s} {len(self.device_launches)} grids launched by "
                         f"kernels, each a launch of its own (to_dict()['device_launches'])")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()
