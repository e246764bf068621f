"""``ptxc check``'s report over a whole application run: every tool's
errors in compute-sanitizer's shape, one header, one ``ERROR SUMMARY``
(CUDA Compute Sanitizer documentation, "Understanding Memcheck Errors").

The blocks come in this order: memcheck's invalid accesses (memcheck_report),
initcheck's uninitialised reads (initcheck_report), racecheck's hazards and
synccheck's barrier and mask errors (hazard_report), failed CUDA API calls
(runtime/checks.py), device faults the application got as CUDA errors
(assert, trap: runtime/faults.py), and the error that stopped the run, if
ptxc stopped it (``--stop-on-error``, or a fault no tool continues after).
``ERROR SUMMARY`` counts every thread-access of the first two kinds, the
error-severity hazards (warnings are shown, not counted), synccheck's
threads or lanes, each thread whose assert failed, and each of the others
once.
"""
from __future__ import annotations

from ptxc.check import hazards as hazard_report, initcheck as initcheck_report, memcheck as memcheck_report


def fault_block(fault) -> list[str]:
    """A device assert, trap or stack overflow the application got as a CUDA
    error."""
    from ptxc.runtime.faults import CUDA_ERROR_ASSERT, CUDA_ERROR_LAUNCH_FAILURE, NAMES
    from ptxc.backends.llvm.layout import ERR_STACK_OVERFLOW
    if fault.error == ERR_STACK_OVERFLOW and fault.site:
        return stack_overflow_block(fault, NAMES.get(fault.code, fault.code))
    what = ("Device-side assertion failed" if fault.code == CUDA_ERROR_ASSERT else
            "Device-side trap" if fault.code == CUDA_ERROR_LAUNCH_FAILURE else
            "Invalid memory access in a kernel not checked (--kernel-name)")
    asserts = [a.strip() for a in fault.assertions if a.strip()]
    message = fault.message
    if asserts and message.endswith(": " + asserts[0]):     # the first assertion, once
        message = message[:-len(asserts[0]) - 2]
    return [f"{what} ({NAMES.get(fault.code, fault.code)}, error {fault.code})",
            f"    {message}"] + [f"    {a}" for a in asserts]


def stack_overflow_block(fault, error: str) -> list[str]:
    """compute-sanitizer's "Stack overflow" (a thread passed its
    cudaLimitStackSize) at the function whose frame did not fit."""
    from ptxc.launcher.access_errors import fmt3
    from ptxc.report.kernel_names import demangle
    s = fault.site
    fn = demangle([s["function"]])[s["function"]]
    detail = s["what"].split(": ", 1)[-1]
    return ["Stack overflow",
            f"    at {fn} in {s['at']} ({s['opcode']})",
            f"    by thread ({fmt3(s['thread'])}) in block ({fmt3(s['block'])})",
            f"    {detail}",
            f"    the launch failed: {error} (error {fault.code})"]


def fault_count(fault) -> int:
    """A failed assert counts once per thread that failed it (each prints
    its line), a trap once; a launch memcheck aborted not at all (its
    invalid accesses are counted)."""
    if getattr(fault, "kind", "fault") == "memcheck":
        return 0
    return max(1, sum(1 for a in fault.assertions if a.strip()))


def abort_block(fault, name: str) -> list[str]:
    """A launch that memcheck aborted (runtime/faults.memcheck_abort)."""
    return [f"Kernel launch {fault.launch} ({name}) aborted after its invalid accesses: the "
            f"application gets cudaErrorLaunchFailure (error 719, \"unspecified launch failure\") "
            f"from its next synchronising call on"]


def blocks(session, leaks=None) -> list[tuple[list[str], int]]:
    """([lines], errors it counts) of every error of the run, in report order;
    ``leaks`` (``--leak-check full``: check/leaks.find) come last, one error
    each."""
    from ptxc.runtime.checks import error_block as api_block
    from ptxc.report.kernel_names import demangle
    launches = session.launches
    names = [e.kernel for _, e in memcheck_report.launch_errors(launches)] + \
            [e.kernel for _, e in initcheck_report.launch_errors(launches)] + \
            [e.kernel for t in hazard_report.ATTR for _, e in hazard_report.launch_reports(launches, t)] + \
            [f.kernel for f in session.faults if getattr(f, "kind", "") == "memcheck"]
    readable = demangle(names)
    out = []
    for r, e in memcheck_report.launch_errors(launches):
        out.append((memcheck_report.error_block(e, memcheck_report.ptx_file(r, e), readable[e.kernel]), e.count))
    for r, e in initcheck_report.launch_errors(launches):
        out.append((initcheck_report.error_block(e, memcheck_report.ptx_file(r, e), readable[e.kernel]), e.count))
    for r, e in hazard_report.launch_reports(launches, "racecheck"):
        out.append((hazard_report.race_lines(e, memcheck_report.ptx_file(r, e), readable[e.kernel]),
                    e.count if e.severity == "error" else 0))
    for r, e in hazard_report.launch_reports(launches, "synccheck"):
        out.append((hazard_report.sync_lines(e, memcheck_report.ptx_file(r, e), readable[e.kernel]), e.count))
    for e in session.api_errors:
        out.append((api_block(e), 1))
    for f in session.faults:
        if getattr(f, "kind", "fault") == "memcheck":
            out.append((abort_block(f, readable[f.kernel]), 0))
        else:
            out.append((fault_block(f), fault_count(f)))
    if session.stopped:
        out.append((["ptxc stopped the application:",
                     f"    {session.stopped.strip().splitlines()[0]}"], 1))
    out += [(leak.block(), 1) for leak in leaks or ()]
    return out


def text(session, tools, meta: dict | None = None, print_limit: int = 0, leaks=None) -> str:
    """The report; ``meta`` (the run's) adds the line of an interrupted run
    after the banner: the errors of the launches that completed follow.
    ``print_limit`` (``--print-limit``, 0: none): at most that many blocks
    are printed, then one line says how many were left out; ERROR SUMMARY
    still counts every error. ``leaks`` (a list: ``--leak-check full``) adds
    their blocks and the LEAK SUMMARY line."""
    from ptxc.check.leaks import summary as leak_summary
    from ptxc.runtime.report import interrupt_text
    found = blocks(session, leaks)
    extra = []
    if "racecheck" in tools:
        races = [e for _, e in hazard_report.launch_reports(session.launches, "racecheck")]
        extra.append(hazard_report.race_summary(races))
    if leaks is not None:
        extra.append(leak_summary(leaks))
    interrupt = interrupt_text(meta or {})
    head = [f"{interrupt[0].upper()}{interrupt[1:]}; the errors of those are reported"] \
        if interrupt else []
    shown = [lines for lines, _ in found]
    if print_limit and len(shown) > print_limit:
        left = len(shown) - print_limit
        shown = shown[:print_limit] + [[f"Print limit reached (--print-limit {print_limit}): "
                                        f"{left} more error report{'s' if left != 1 else ''} "
                                        f"not shown"]]
    return memcheck_report.report_text("+".join(tools), shown, sum(n for _, n in found),
                                       extra, head)


def total(session, leaks=None) -> int:
    return sum(n for _, n in blocks(session, leaks))


def as_json(session, tools, leaks=None) -> dict:
    launches = session.launches
    errors = memcheck_report.error_rows(launches)
    init = [{"launch": r.id, "module": r.module, **e.as_dict()}
            for r, e in initcheck_report.launch_errors(launches)]
    doc = {"tool": "+".join(tools), "error_count": total(session, leaks), "errors": errors,
            "uninitialized": init,
            "hazards": hazard_report.launches_json(launches, "racecheck")["errors"],
            "hazard_warnings": hazard_report.launches_json(launches, "racecheck")["warning_count"],
            "sync_errors": hazard_report.launches_json(launches, "synccheck")["errors"],
            "api_errors": [e.as_dict() for e in session.api_errors],
            "device_faults": [{"code": f.code, "message": f.message, "assertions": f.assertions}
                              for f in session.faults],
            "stopped": session.stopped}
    if leaks is not None:                 # --leak-check full
        doc["leaks"] = [leak.as_dict() for leak in leaks]
        doc["leak_bytes"] = sum(leak.size for leak in leaks)
    return doc
