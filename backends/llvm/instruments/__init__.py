"""Instruments: what a tool adds to the generated kernel, one module per
instrument (with its native helpers in ``<name>_ir`` where it has some).

    memcheck (+ memcheck_heap), initcheck (+ initcheck_ops)
                                    invalid (also past a malloc block) and
                                    uninitialised accesses
    racecheck (+ racecheck_ir, racecheck_mbar), synccheck, check_hooks
                                           shared-memory hazards, barrier errors
    fault_check                            a hybrid run's checks of skipped accesses
    provenance_ir                          the allocation an address started from
    mem_count (+ memcount_ir)              the memory counters
    value_prof                             value profiles
    inject_ir (+ inject_ctl)               error injection

How each plugs into the code generator (the mechanism is the same for all:
a switch on KernelCodegen, hooks the lowering calls, ctypes callbacks
registered once in jit.llvm(), results read by ptxc/launcher):

* Switches. jit.compile_kernel(..., **variants) compiles a variant of its
  own (VARIANTS: memcheck, initcheck, inject, value_profile, racecheck,
  synccheck; part of the cache key, the default code is unchanged);
  jit._generate sets ``KernelCodegen.memcheck``, ``.initcheck``,
  ``.value_profile`` and ``.checks`` (racecheck/synccheck), and for
  ``inject`` uses the subclass inject_ir.InjectCodegen. The memory counters
  are ``compile_kernel(memory=bank bytes)`` (``.memory_counters``); the
  fault checks follow the slice (``.checks_faults``: hybrid with
  faults=checked); provenance checks are always on.
* Hooks, each a no-op when its switch is off. codegen.instr calls
  check_hooks.sync_hook (barriers, bar.warp.sync, .sync collectives),
  value_prof (WriteProfile around each lowering, profile_barrier),
  provenance_ir.keep_root (after ld/ldu), and, for instructions the slice
  drops, fault_check.check_only and mem_count.count_only. The memory
  lowering calls mem_count.count_access (ops/memory.py ld/st,
  ops/atomics.py, fault_check) and initcheck_ops.track (ld/st/cp.async,
  atom/red, wmma); ops/resolve.py calls provenance_ir.with_provenance,
  check_hooks.race_hook and, in memcheck's cold error branch,
  ``ptxc_memcheck``; ops/ldmatrix.py calls race_hook and ops/mbarrier.py
  check_hooks.race_mbar_hook. Native helpers (racecheck_ir, memcount_ir,
  initcheck_ops.FAST, value_prof.helper) go into ``cg.helpers``.
* Callbacks (jit.llvm() calls register_symbols): memcheck
  (``ptxc_memcheck``), initcheck (``ptxc_initcheck``), check_hooks
  (``ptxc_race_report``, ``ptxc_race_mbar``, ``ptxc_sync``), inject_ctl
  (the ``ptxc_inject_ctl`` block). A callback finds its launch's log or
  checker by the launch-state address: memcheck.active (entered by
  runtime.Launch.run), initcheck.active (ptxc.launcher.checks.initcheck_active),
  check_hooks.active (ptxc/launcher/checks.py, activate); inject_ctl.arm
  (ptxc/launcher/injection.py, launch).
* Results. memcheck.MemcheckLog and initcheck's log ->
  ptxc/launcher/access_errors.py -> Profile.mem_errors / init_errors;
  RaceChecker.hazards() / SyncChecker.errors() ->
  ptxc/launcher/hazard_reports.py -> Profile.race_hazards / sync_errors
  (ptxc/check/ prints them); the counter array: Compiled.mem_ctr ->
  launcher/results_memory.py, Compiled.value_ctr / value_or ->
  launcher/results_value.py; inject_ctl.hit() -> launcher/injection.py;
  ``plan.provenance_shadow`` -> launcher/provenance_message.py (and
  memcheck's shadow_values); fault checks stop the run through the normal
  error report (runtime.RunError).
"""
