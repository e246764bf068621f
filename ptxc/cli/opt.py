"""``ptxc opt``: parse a PTX file, run a pass pipeline, print the reports
and optionally the module (docs/user-guide.md).

    ptxc opt --pass=PIPELINE [--emit=ir|ptx|dot|none] [--format=text|json|csv]
             [-o FILE] [--verify-each] [launch options] FILE|-
"""
from __future__ import annotations

import sys

import click

from ptxc.cli.options import (EMIT_CHOICES, FORMAT_CHOICES, MODE_CHOICES, arg_callback,
                              bank_bytes_option, build_launch, dim_callback, ensure_nl,
                              html_option, max_steps_option, memory_counters_option,
                              print_warnings, read_module, threads_option, topdown_option,
                              value_profile_option, write_output)



@click.command("opt")
@click.argument("file", metavar="FILE|-")
@click.option("--pass", "-p", "pipeline", default=None, metavar="PIPELINE",
              help="Passes to run, comma separated, with options in braces: "
                   "'slice{memory=noalias},count'. Empty (--pass=) runs none; without "
                   "--pass (and --emit), a summary of the module.")
@click.option("--emit", type=click.Choice(EMIT_CHOICES), default="none", show_default=True,
              help="What to print after the pass reports: the SSA IR, PTX text, "
                   "the CFG as Graphviz dot, or nothing.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="text",
              show_default=True, help="Format of the pass reports.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
              default=None, help="Write the emitted module here instead of stdout "
                                 "(reports still go to stdout).")
@click.option("--verify-each", is_flag=True, help="Run the SSA verifier after every pass.")
@click.option("--kernel", default=None, metavar="NAME", help="Kernel to launch.")
@click.option("--grid", default=None, metavar="X[,Y,Z]", callback=dim_callback,
              help="Grid size in CTAs.")
@click.option("--block", default=None, metavar="X[,Y,Z]", callback=dim_callback,
              help="CTA size in threads.")
@click.option("--shared", type=click.IntRange(min=0), default=None, metavar="BYTES",
              help="Dynamic shared memory per CTA in bytes.")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE", callback=arg_callback,
              help="A kernel argument (repeatable), e.g. n=500 or a=random:f32:512:1.")
@click.option("--mode", type=click.Choice(MODE_CHOICES), default=None,
              help="hybrid: run only the branch slice (default); full: run every instruction.")
@max_steps_option("Step budget per warp before the run is stopped as non-terminating.")
@threads_option("Host threads that run CTAs in parallel.")
@memory_counters_option("Also count memory coalescing, shared-memory bank conflicts and atomics "
                   "per memory instruction (slower; docs/metrics.md).")
@bank_bytes_option("Shared-memory bank width for --memory-counters (default 4).")
@click.option("--cta-equivalence/--no-cta-equivalence", default=True, show_default=True,
              help="In a hybrid run, run one CTA per class of CTAs that provably give the "
                   "same counters (docs/cta-equivalence.md); --no-cta-equivalence runs every CTA.")
@click.option("--by", "by", type=click.Choice(["ptx", "source"]), default="ptx", show_default=True,
              help="source: also report per CUDA source line (needs .loc: nvcc -lineinfo/-G).")
@html_option("Also write the self-contained HTML report (docs/report.md).")
@click.option("--check", type=click.Choice(["memcheck", "racecheck", "synccheck", "all"]),
              default=None,
              help="memcheck: record out-of-bounds and misaligned accesses and go on; racecheck: "
                   "shared-memory hazards; synccheck: divergent barriers and bad warp masks (a "
                   "full run; docs/check.md); exit status 1 when there were errors.")
@topdown_option("After the count pass's launch (with --memory-counters), print its TopDown "
                   "(Saiz 2021, chapter 4) on the --gpu model (docs/predict.md).")
@click.option("--gpu", "gpu_key", default="h100", show_default=True, metavar="MODEL",
              help="GPU model of --topdown and of --html's launch statistics: h100, a100, "
                   "v100, t4, rtx2060, gtx260, gtx1070, quadro-rtx4000.")
@value_profile_option("Profile every register write: constant bits and scalar writes per "
                   "instruction (a full run; docs/value-profile.md).")
def opt_command(file, pipeline, emit, fmt, output, verify_each, kernel, grid, block,
                shared, args, mode, max_steps, threads, memory_counters, bank_bytes,
                cta_equivalence, check, topdown, gpu_key, value_profile, by="ptx",
                html_path=None):
    """Parse FILE (or stdin for '-'), run a pass pipeline, print the reports
    and optionally the resulting module.

    \b
    Examples:
      ptxc opt --pass=print-ir kernel.ptx
      ptxc opt --pass=postdomtree,reconvergence kernel.ptx
      ptxc opt --pass= --emit=ptx kernel.ptx -o out.ptx
      ptxc opt --pass='slice,count' --kernel k --grid 4 --block 128 --arg n=500 kernel.ptx
    """
    launch = build_launch(kernel, grid, block, shared, args, mode, max_steps, threads,
                          memory_counters, bank_bytes, cta_equivalence, check, value_profile)
    summary = pipeline is None and emit == "none" and launch is None and not (topdown or html_path)
    pipeline = pipeline or ""
    from ptxc.passes.pipeline import make_pass, parse_pipeline, run_pipeline
    # Build the passes first: a bad pass name or option is reported before
    # the (possibly long) parse of the file.
    passes = [make_pass(name, opts) for name, opts in parse_pipeline(pipeline)]
    if (by == "source" or html_path) and (launch is None or "count" not in [p.name for p in passes]):
        raise click.UsageError("--by source and --html need the count pass and a launch "
                               "(--pass=count --kernel ... --grid ... --block ...)")
    module = read_module(file)
    seen = print_warnings(module)
    if summary:                                      # `ptxc opt FILE`: what is in it
        write_output(module_summary(module), None)
        click.echo("ptxc: no --pass given: the module parsed; run passes with "
                   "--pass=PIPELINE ('ptxc passes' lists them)", err=True)
        return
    options = {"format": fmt, "by": by}
    if launch is not None:
        options["launch"] = launch
    try:
        result = run_pipeline(module, passes, verify_each=verify_each, **options)
    finally:
        seen = print_warnings(module, seen)
    reports = render_reports(result, fmt)
    if topdown:
        from ptxc.cli.predict import opt_topdown
        reports = opt_topdown(module, launch, gpu_key, fmt, reports)
    if reports:
        sys.stdout.write(ensure_nl(reports))
        sys.stdout.flush()
    write_output(emit_text(module, emit), output)
    if html_path:                                     # docs/report.md
        from ptxc.cli.html_output import opt_html
        opt_html(html_path, result, module, gpu_key)
    if check:
        from ptxc.check.hazards import profile_errors
        if profile_errors(module.attrs.get("launch_profile")):
            sys.exit(1)


def module_summary(module) -> str:
    """``ptxc opt FILE`` without ``--pass``: the module's header and, per
    function, its parameters, PTX instructions and blocks."""
    from ptxc.ir.names import described
    funcs = [f for f in module.functions if not f.is_decl]
    kernels = sum(1 for f in funcs if f.is_kernel)
    head = [f"PTX {module.version}" if module.version else "PTX",
            ", ".join(module.target)] + ([f"{module.address_size}-bit addresses"]
                                        if module.address_size else [])
    lines = [f"{module.filename}: {', '.join(h for h in head if h)}; "
             f"{kernels} kernel{'s' if kernels != 1 else ''}, {len(funcs) - kernels} other "
             f"function{'s' if len(funcs) - kernels != 1 else ''}"]
    for f in funcs:
        n = sum(1 for _ in f.ptx_instructions())
        lines.append(f"  {'kernel' if f.is_kernel else 'function'} {described(f.name)}: "
                     f"{len(f.params)} parameter{'s' if len(f.params) != 1 else ''}, "
                     f"{n} instruction{'s' if n != 1 else ''} in {len(f.blocks)} "
                     f"block{'s' if len(f.blocks) != 1 else ''}")
    return "\n".join(lines) + "\n"


def render_reports(result, fmt: str) -> str:
    """The pass reports of a PipelineResult in the requested format."""
    if fmt == "json":
        if not result.results:
            return ""
        try:
            return result.to_json()
        except TypeError:
            import json
            return json.dumps({r.name: r.to_json() for r in result.results},
                              indent=2, default=str)
    if fmt == "csv":
        return "".join(ensure_nl(_csv_of(r)) for r in result.results)
    return result.text()


def _csv_of(r) -> str:
    data = getattr(r, "csv", None)
    if data is None:
        return r.text
    if isinstance(data, str):
        return data
    import csv
    import io
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if isinstance(data, dict):
        data = list(data.items())
    for row in data:
        writer.writerow(row if isinstance(row, (list, tuple)) else [row])
    return buf.getvalue()


def emit_text(module, what: str) -> str:
    """The module as --emit asks: SSA IR, PTX, CFG dot, or nothing."""
    if what == "ir":
        return module.print_ir()
    if what == "ptx":
        return module.to_ptx()
    if what == "dot":
        from ptxc.passes.cfg import to_dot
        return to_dot(module)
    return ""
