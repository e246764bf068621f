"""Launching a kernel on the CPU (docs/launch.md): its configuration and
arguments, the slice and CTA classes it runs, the check tools around it, its
result and its faults.

    api            launch (``ptxc.launch``), launch_segments (the CUDA runtime),
                   launch_from_options (the CLI), compile_launches
    config         kernel, grid, block, mode, memory-counter setting, checked
    args           arguments -> parameter bytes and buffers; the CLI's NAME=VALUE
    buffers        the byte buffers a launch runs on (in place or copied)
    alias          which allocation each pointer argument points into
    cta_classes    whether a hybrid launch runs one CTA per equivalence class
    compile        the slice and the compiled variant a launch runs
    execute        running a compiled launch -> Profile
    checks         memcheck, initcheck, racecheck, synccheck around a launch
    access_errors  memcheck's and initcheck's findings, as records
    hazard_reports racecheck's and synccheck's findings, as records
    injection      the error-injection session a launch consults (ptxc inject)
    faults         a run-time error as one message (kernel, CTA, thread, line)
    addresses      what an address points into, for messages
    provenance_message  the allocation an out-of-bounds address started from
    limits         the launch limits of a GPU
    launch_file    launch files of ``ptxc profile --launches``
    profile        Profile: METRICS.md's counters of a launch
    results, results_memory, results_value, value_profile
                   raw counters -> Profile, memory counters, value profiles

The folder is ``launcher`` because ``ptxc.launch`` is the public function.
``ptxc.launcher.launch_segments`` (and launch, launch_from_options,
compile_launches) are loaded on first use, so that importing one module of this package does not
import them all.
"""
_API = {"launch": "api", "launch_segments": "api", "launch_from_options": "api",
        "compile_launches": "compile"}


def __getattr__(name: str):
    if name in _API:
        import importlib
        return getattr(importlib.import_module(f"ptxc.launcher.{_API[name]}"), name)
    raise AttributeError(f"module 'ptxc.launcher' has no attribute '{name}'")
