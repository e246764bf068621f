"""The ``ptxc`` command line.

    ptxc opt --pass=PIPELINE [--emit=ir|ptx|dot|none] [--format=text|json|csv]
             [-o FILE] [--verify-each] [launch options] FILE|-
    ptxc passes [-v]
    ptxc --version

Errors: every :class:`ptxc.errors.PtxcError` is printed as ``err.render()`` on
stderr with exit status 1 and no traceback; an unreadable input file gives a
one-line ``ptxc: error: cannot read ...``; click usage errors keep status 2;
any other exception is an internal error (status 70; the traceback is shown
only with ``PTXC_DEBUG=1``).

Keep this module cheap to import: lark, networkx, llvmlite and numpy are
imported only by the code that needs them, never here.
"""
from __future__ import annotations

import gc
import os
import sys

# A CLI process allocates millions of small objects (the IR, the slices, the
# code generator's text) and frees few of them before it exits: a collection
# every 100000 allocations instead of 700 costs ~7 % less CPU on a whole XLA
# module (bench/profile_module.py) and still bounds the garbage of a long run.
gc.set_threshold(100_000, 50, 50)

# numpy's OpenBLAS starts one thread per core when numpy is imported (~50 ms of
# CPU per process); ptxc uses numpy for buffers, never for BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click  # noqa: E402

from ptxc import __version__  # noqa: E402
from ptxc.errors import PtxcError  # noqa: E402

EXIT_ERROR = 1        # bad input (PtxcError, unreadable file)
EXIT_USAGE = 2        # click usage errors
EXIT_INTERNAL = 70    # EX_SOFTWARE: a bug in ptxc

EMIT_CHOICES = ("none", "ir", "ptx", "dot")
FORMAT_CHOICES = ("text", "json", "csv")
MODE_CHOICES = ("hybrid", "full")


class InputError(PtxcError):
    """A file that cannot be read or written: a one-line ``ptxc: error: ...``."""

    def headline(self) -> str:
        return f"ptxc: error: {self.message}"


# ----------------------------------------------------------------- group

class PtxcGroup(click.Group):
    """A click group that turns ptxc errors into clean messages and exit codes,
    and imports a command's module (``lazy``: name -> (module, attribute))
    only when that command runs or help lists it: `ptxc profile` does not
    pay for the imports of `ptxc run`, `inject`, ... (docs/profile.md, "Speed")."""

    lazy: dict = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, name: str):
        if name not in self.commands and name in self.lazy:
            import importlib
            module, attribute = self.lazy[name]
            self.add_command(getattr(importlib.import_module(module, __package__), attribute),
                             name)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit,
                click.exceptions.Abort):
            raise
        except PtxcError as err:
            _echo_err(render_error(err))
            ctx.exit(EXIT_ERROR)
        except BrokenPipeError:
            # `ptxc opt ... | head`: stop quietly, like other Unix tools.
            _silence_stdout()
            ctx.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            _echo_err("ptxc: interrupted")
            ctx.exit(130)
        except Exception as err:  # noqa: BLE001 - last line of defence
            _echo_err(f"ptxc: internal error: {type(err).__name__}: {err}")
            if os.environ.get("PTXC_DEBUG") == "1":
                import traceback
                _echo_err(traceback.format_exc().rstrip("\n"))
            else:
                _echo_err("ptxc: (set PTXC_DEBUG=1 for a traceback; please report this)")
            ctx.exit(EXIT_INTERNAL)


def render_error(err: PtxcError) -> str:
    """``err.render()``; errors without a source location get a ``ptxc:`` prefix."""
    text = err.render()
    if err.loc is None and not text.startswith("ptxc:"):
        text = "ptxc: " + text
    return text


def _echo_err(text: str) -> None:
    click.echo(text, err=True)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


@click.group(name="ptxc", cls=PtxcGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="ptxc",
                      message="%(prog)s %(version)s")
def cli() -> None:
    """ptxc: a Python compiler framework for NVIDIA PTX.

    Parses PTX into an SSA IR, runs analysis and transform passes on it
    (CFG, dominators, reconvergence points, branch slices, counters) and can
    execute kernels on the CPU with a JIT-compiled SIMT model: no GPU needed.

    Run `ptxc passes` for the list of passes and `ptxc opt --help` for the
    driver's options.
    """


# ------------------------------------------------------- option parsing

def parse_dim(text: str, what: str) -> tuple[int, int, int]:
    """'4' -> (4, 1, 1); '4,2' -> (4, 2, 1); '4,2,3' or '4x2x3' -> (4, 2, 3)."""
    raw = text.strip().replace("x", ",").replace("X", ",")
    parts = [p.strip() for p in raw.split(",")]
    if not 1 <= len(parts) <= 3 or any(p == "" for p in parts):
        raise click.BadParameter(
            f"expected X, X,Y or X,Y,Z with positive integers, got '{text}'", param_hint=what)
    dims = []
    for p in parts:
        try:
            v = int(p, 0)
        except ValueError:
            raise click.BadParameter(f"'{p}' in '{text}' is not an integer",
                                     param_hint=what) from None
        if v < 1:
            raise click.BadParameter(f"dimensions must be >= 1, got '{text}'", param_hint=what)
        dims.append(v)
    while len(dims) < 3:
        dims.append(1)
    return tuple(dims)  # type: ignore[return-value]


def _dim_callback(ctx, param, value):
    if value is None:
        return None
    return parse_dim(value, "'--" + param.name + "'")


def _arg_callback(ctx, param, values):
    for v in values:
        name, eq, _ = v.partition("=")
        if not eq or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got '{v}'", param_hint="'--arg'")
    return list(values)


def build_launch(kernel, grid, block, shared, args, mode, max_steps, threads,
                 memory_counters=False, bank_bytes=None,
                 cta_equivalence: bool = True, check=None, value_profile=False) -> dict | None:
    """The ``launch`` option dict for the pass pipeline, or None when no launch
    was asked for (none of --kernel, --grid, --block given)."""
    if kernel is None and grid is None and block is None:
        extra = [flag for flag, v in (("--arg", args), ("--shared", shared),
                                      ("--mode", mode), ("--max-steps", max_steps),
                                      ("--threads", threads),
                                      ("--memory-counters", memory_counters or None),
                                      ("--bank-bytes", bank_bytes),
                                      ("--no-cta-equivalence", not cta_equivalence or None),
                                      ("--check", check),
                                      ("--value-profile", value_profile or None))
                 if v not in (None, (), [])]
        if extra:
            raise click.UsageError(
                f"{', '.join(extra)} only apply to a kernel launch; "
                "give --kernel, --grid and/or --block as well")
        return None
    if bank_bytes is not None and not memory_counters:
        raise click.UsageError("--bank-bytes only applies with --memory-counters")
    launch = {
        "kernel": kernel,
        "grid": grid,
        "block": block,
        "shared": shared or 0,
        "args": list(args),
        "mode": mode or "hybrid",
        "max_steps": max_steps,
        "threads": threads,
        "cta_equivalence": cta_equivalence,
    }
    if memory_counters:
        launch.update(memory_counters=True, bank_bytes=int(bank_bytes or 4))
    if check:
        if mode == "hybrid":
            raise click.UsageError(f"--check {check} needs --mode full: a hybrid run skips the "
                                   "accesses its slice does not keep")
        launch.update(check=check, mode="full")
    if value_profile:
        if mode == "hybrid":
            raise click.UsageError("--value-profile needs --mode full: a hybrid run computes only "
                                   "the branch slice")
        launch.update(value_profile=True, mode="full")
    return launch


# ------------------------------------------------------------ input/output

def read_module(path: str):
    """Parse FILE (or stdin for '-') into a Module."""
    import ptxc
    if path == "-":
        try:
            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        except OSError as e:
            raise InputError(f"cannot read standard input: {e.strerror or e}") from None
        return ptxc.parse(decode_source(data, "<stdin>"), "<stdin>")
    # Check readability ourselves so a missing file is a one-line message,
    # whatever the parser's loader does.
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise InputError(f"cannot read '{path}': {e.strerror or e}") from None
    return ptxc.parse(decode_source(data, path), path)


def decode_source(data, filename: str) -> str:
    """Decode PTX bytes as UTF-8; a bad byte is an error at its line and column."""
    if isinstance(data, str):
        return data
    from ptxc.frontend.parser import decode
    return decode(data, filename)


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
        return "".join(_ensure_nl(_csv_of(r)) for r in result.results)
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


def _ensure_nl(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


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


def write_output(text: str, output: str | None) -> None:
    if output is None or output == "-":
        if text:
            sys.stdout.write(_ensure_nl(text))
            sys.stdout.flush()
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(_ensure_nl(text) if text else "")
    except OSError as e:
        raise InputError(f"cannot write '{output}': {e.strerror or e}") from None


def _print_warnings(module, start: int = 0) -> int:
    warnings = list(getattr(module, "warnings", None) or [])
    for w in warnings[start:]:
        _echo_err(w)
    return len(warnings)


# ------------------------------------------------------------------- opt

@cli.command("opt")
@click.argument("file", metavar="FILE|-")
@click.option("--pass", "-p", "pipeline", default="", metavar="PIPELINE",
              help="Passes to run, comma separated, with options in braces: "
                   "'slice{memory=noalias},count'. Empty (--pass=) runs none.")
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
@click.option("--grid", default=None, metavar="X[,Y,Z]", callback=_dim_callback,
              help="Grid size in CTAs.")
@click.option("--block", default=None, metavar="X[,Y,Z]", callback=_dim_callback,
              help="CTA size in threads.")
@click.option("--shared", type=click.IntRange(min=0), default=None, metavar="BYTES",
              help="Dynamic shared memory per CTA in bytes.")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE", callback=_arg_callback,
              help="A kernel argument (repeatable), e.g. n=500 or a=random:f32:512:1.")
@click.option("--mode", type=click.Choice(MODE_CHOICES), default=None,
              help="hybrid: run only the branch slice (default); full: run every instruction.")
@click.option("--max-steps", type=click.IntRange(min=1), default=None, metavar="N",
              help="Step budget per warp before the run is stopped as non-terminating.")
@click.option("--threads", type=click.IntRange(min=1), default=None, metavar="N",
              help="Host threads that run CTAs in parallel.")
@click.option("--memory-counters", is_flag=True,
              help="Also count memory coalescing, shared-memory bank conflicts and atomics "
                   "per memory instruction (slower; docs/metrics.md).")
@click.option("--bank-bytes", type=click.Choice(["4", "8"]), default=None,
              help="Shared-memory bank width for --memory-counters (default 4).")
@click.option("--cta-equivalence/--no-cta-equivalence", default=True, show_default=True,
              help="In a hybrid run, run one CTA per class of CTAs that provably give the "
                   "same counters (docs/cta-equivalence.md); --no-cta-equivalence runs every CTA.")
@click.option("--by", "by", type=click.Choice(["ptx", "source"]), default="ptx", show_default=True,
              help="source: also report per CUDA source line (needs .loc: nvcc -lineinfo/-G).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the self-contained HTML report (docs/report.md).")
@click.option("--check", type=click.Choice(["memcheck", "racecheck", "synccheck", "all"]),
              default=None,
              help="memcheck: record out-of-bounds and misaligned accesses and go on; racecheck: "
                   "shared-memory hazards; synccheck: divergent barriers and bad warp masks (a "
                   "full run; docs/check.md); exit status 1 when there were errors.")
@click.option("--topdown", is_flag=True,
              help="After the count pass's launch (with --memory-counters), print its TopDown "
                   "Level 1 and 2 on the --gpu model (docs/predict.md).")
@click.option("--gpu", "gpu_key", default="h100", show_default=True, metavar="MODEL",
              help="GPU model of --topdown: h100, a100, v100, t4, rtx2060, gtx260.")
@click.option("--value-profile", is_flag=True,
              help="Profile every register write: constant bits and scalar writes per "
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
    from ptxc.ir.passmanager import make_pass, parse_pipeline, run_pipeline
    # Build the passes first: a bad pass name or option is reported before
    # the (possibly long) parse of the file.
    passes = [make_pass(name, opts) for name, opts in parse_pipeline(pipeline)]
    if (by == "source" or html_path) and (launch is None or "count" not in [p.name for p in passes]):
        raise click.UsageError("--by source and --html need the count pass and a launch "
                               "(--pass=count --kernel ... --grid ... --block ...)")
    module = read_module(file)
    seen = _print_warnings(module)
    options = {"format": fmt, "by": by}
    if launch is not None:
        options["launch"] = launch
    try:
        result = run_pipeline(module, passes, verify_each=verify_each, **options)
    finally:
        seen = _print_warnings(module, seen)
    reports = render_reports(result, fmt)
    if topdown:
        from ptxc.cli.predict import opt_topdown
        reports = opt_topdown(module, launch, gpu_key, fmt, reports)
    if reports:
        sys.stdout.write(_ensure_nl(reports))
        sys.stdout.flush()
    write_output(emit_text(module, emit), output)
    if html_path:                                     # docs/report.md
        from ptxc.cli.html_output import opt_html
        opt_html(html_path, result, module)
    if check:
        from ptxc.check.hazards import profile_errors
        if profile_errors(module.attrs.get("launch_profile")):
            sys.exit(1)


# --------------------------------------------------------------- profile

def _launch_callback(ctx, param, values) -> dict:
    """['k:155:256', 'k2:4,2'] -> {'k': ((155,1,1), (256,1,1)), 'k2': ((4,2,1), None)}."""
    out = {}
    for v in values:
        parts = v.split(":")
        if len(parts) not in (2, 3) or not parts[0].strip():
            raise click.BadParameter(f"expected KERNEL:GRID[:BLOCK], got '{v}'",
                                     param_hint="'--launch'")
        grid = parse_dim(parts[1], "'--launch'")
        block = parse_dim(parts[2], "'--launch'") if len(parts) == 3 else None
        out[parts[0].strip()] = (grid, block)
    return out


def _kernel_arg_callback(ctx, param, values) -> dict:
    """['k:n=5', 'k:a=zeros:f32:8'] -> {'k': ['n=5', 'a=zeros:f32:8']}."""
    out: dict[str, list] = {}
    for v in values:
        kernel, colon, rest = v.partition(":")
        name, eq, _ = rest.partition("=")
        if not colon or not kernel.strip() or not eq or not name.strip():
            raise click.BadParameter(f"expected KERNEL:NAME=VALUE, got '{v}'", param_hint="'--arg'")
        out.setdefault(kernel.strip(), []).append(rest)
    return out


@cli.command("profile")
@click.argument("files", nargs=-1, required=True, metavar="FILE|DIR...")
@click.option("--launch", "launches", multiple=True, metavar="KERNEL:GRID[:BLOCK]",
              callback=_launch_callback,
              help="Launch KERNEL with this grid (and block; default .reqntid) instead of "
                   "inferring it (repeatable), e.g. fusion_51:98:256.")
@click.option("--arg", "args", multiple=True, metavar="KERNEL:NAME=VALUE",
              callback=_kernel_arg_callback,
              help="An argument of one kernel (repeatable), value syntax as 'opt --arg'.")
@click.option("--launches", "launch_file", metavar="FILE", default=None,
              help="A launch file (JSON or CSV, docs/profile.md): grid, block and arguments "
                   "per kernel; --launch and --arg win over it.")
@click.option("--zero-fill", is_flag=True, default=False,
              help="Run kernels whose control flow reads memory that has no --arg on "
                   "zero-filled buffers (the row says so).")
@click.option("--kernel", "kernels", multiple=True, metavar="NAME",
              help="Profile only these kernels (repeatable; default: all).")
@click.option("--mode", type=click.Choice(MODE_CHOICES), default=None,
              help="hybrid (default): run only the branch slice; full: run every instruction "
                   "(the default with --value-profile).")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="text",
              show_default=True, help="Report format.")
@click.option("--max-steps", type=click.IntRange(min=1), default=None, metavar="N",
              help="Step budget per warp before a run is stopped as non-terminating.")
@click.option("--threads", type=click.IntRange(min=1), default=None, metavar="N",
              help="Host threads that run CTAs in parallel.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Modules profiled in parallel processes, or for one file the kernels "
                   "compiled and run in parallel processes (default: every core).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Profile the modules on this Dask distributed scheduler (tcp://host:8786).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              metavar="FILE.sqlite", help="Also write the rows to this SQLite file.")
@click.option("--by", "by", type=click.Choice(["ptx", "source"]), default="ptx", show_default=True,
              help="source: also report per CUDA source line (one module; needs .loc).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the self-contained HTML report (one module; docs/report.md).")
@click.option("--timings", is_flag=True,
              help="Add the times to the output of several modules (then not deterministic).")
@click.option("--topdown", is_flag=True,
              help="Also predict each launched kernel's time on the --gpu model and its TopDown "
                   "(one module; reruns each launch with memory counters; docs/predict.md).")
@click.option("--gpu", "gpu_key", default="h100", show_default=True, metavar="MODEL",
              help="GPU model of --topdown: h100, a100, v100, t4, rtx2060, gtx260.")
@click.option("--value-profile", is_flag=True,
              help="Profile every register write of one module's kernels: constant bits and "
                   "scalar writes per kernel (a full run; docs/value-profile.md).")
def profile_command(files, launches, args, launch_file, zero_fill, kernels, mode, fmt, max_steps,
                    threads, jobs, dask_address, report_path, timings, topdown, gpu_key,
                    value_profile, by="ptx", html_path=None):
    """Run every kernel of FILE and print one row per kernel and the module total;
    several files or a directory (its *.ptx, recursively) give a row per kernel
    of every module, each module's total and the grand total.

    A kernel's launch is --launch, else its --launches entry, else its
    linear-index bound check (XLA-style kernels: .reqntid block, grid =
    ceil(bound / CTA stride)), else one CTA (grid 1, block .reqntid or
    .maxntid: a per-CTA row, counters of that CTA only). The report names
    each launch's source and lists the kernels that could not be launched,
    with the reason. Exit status 1 if a kernel failed at run time or a
    module could not be profiled (its row says why).

    \b
    Examples:
      ptxc profile module.ptx
      ptxc profile --format=csv module.ptx > rows.csv
      ptxc profile --launch fusion_51:98 --arg 'k:n=500' module.ptx
      ptxc profile --jobs 8 --format=csv --report dumps.sqlite xla_dumps/
      ptxc profile --launches launches.json --zero-fill module.ptx
    """
    import time
    mode = value_profile_mode(mode, files) if value_profile else mode or "hybrid"
    options = dict(launches=launches, args=args, kernels=list(kernels) or None, mode=mode,
                   threads=threads, max_steps=max_steps, launch_file=launch_file,
                   zero_fill=zero_fill)
    if value_profile:
        options["value_profile"] = True
    if topdown and (len(files) > 1 or os.path.isdir(files[0]) or fmt == "csv"):
        raise click.UsageError("--topdown profiles one module, in text or JSON")
    if len(files) > 1 or os.path.isdir(files[0]):
        if by == "source" or html_path:
            raise click.UsageError("--by source and --html take one module")
        if launch_file:                 # a malformed launch file is one error, not one per module
            from ptxc.launcher.launch_file import read_entries
            read_entries(launch_file)
        from ptxc.cli.profile_batch import profile_batch_command
        return profile_batch_command(files, options, fmt, jobs, dask_address, report_path,
                                     timings)
    from ptxc.profile.module_profile import FAILED, profile_module
    from ptxc.profile.module_render import render
    pause_gc()
    mp = None
    if not (topdown or value_profile or by == "source" or html_path or report_path):
        from ptxc.profile.split import profile_split        # every kernel's work in forked processes
        mp = profile_split(files[0], options, kernel_jobs(jobs))
        if mp is not None:
            _print_warnings(mp.module)
    if mp is None:
        t0 = time.perf_counter()
        module = read_module(files[0])
        parse_s = time.perf_counter() - t0
        seen = _print_warnings(module)
        try:
            mp = profile_module(module, **options, jobs=1 if topdown else kernel_jobs(jobs))
        finally:
            _print_warnings(module, seen)
        mp.timings = {"parse": parse_s, **mp.timings}
    text, predictions = render(mp, fmt), None
    if topdown:
        from ptxc.cli.predict import profile_topdown
        text, predictions = profile_topdown(mp, gpu_key, fmt, text, threads, max_steps)
    if by == "source":                                 # docs/report.md
        from ptxc.report.source_views import profile_view
        view = profile_view(mp, fmt)
        text = view if fmt == "csv" else text + view
    sys.stdout.write(text)
    sys.stdout.flush()
    if html_path:
        from ptxc.cli.html_output import profile_html
        profile_html(html_path, mp)
    if report_path:
        from ptxc.cli.profile_batch import write_report
        write_report(report_path, [mp], mode, timings)
        if value_profile:
            from ptxc.valueprof.run_report import add_module_tables
            add_module_tables(report_path, mp)
        if predictions is not None:
            from ptxc.predict.render import write_sqlite
            write_sqlite(report_path, predictions)
    failed = [r.kernel for r in mp.rows if r.status == FAILED]
    if failed:
        raise PtxcError(f"{len(failed)} kernel(s) failed: {', '.join(failed[:5])}"
                        + (" ..." if len(failed) > 5 else "") + " (see the report)")


def value_profile_mode(mode: str | None, files) -> str:
    """``ptxc profile --value-profile``: one module, a full run."""
    if len(files) > 1 or os.path.isdir(files[0]):
        raise click.UsageError("--value-profile profiles one module at a time")
    if mode == "hybrid":
        raise click.UsageError("--value-profile needs --mode full: a hybrid run computes only "
                               "the branch slice")
    return "full"


# ---------------------------------------------------------------- passes

@cli.command("passes")
@click.option("-v", "--verbose", is_flag=True, help="Also list each pass's options.")
def passes_command(verbose):
    """List every pass with its one-line summary."""
    from ptxc.passes.registry import pass_names
    names = pass_names()
    width = max((len(n) for n in names), default=0)
    for name in names:
        cls, problem = _load_pass(name)
        if cls is None:
            click.echo(f"  {name:<{width}}  (not available{': ' + problem if verbose and problem else ''})")
            continue
        click.echo(f"  {name:<{width}}  {getattr(cls, 'summary', '') or ''}".rstrip())
        if verbose:
            for f in cls.options():
                default = _field_default(f)
                typ = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
                click.echo(f"  {'':<{width}}    {f.name.replace('_', '-')}: {typ}"
                           + (f" = {default!r}" if default is not None else ""))


def _load_pass(name: str):
    from ptxc.passes.registry import get_pass_class
    try:
        return get_pass_class(name), ""
    except Exception as e:  # noqa: BLE001 - a pass being written must not break the list
        return None, f"{type(e).__name__}: {e}"


def _field_default(f):
    import dataclasses
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return None


# ------------------------------------------------------------------- run

PtxcGroup.lazy.update({          # imported when used (PtxcGroup)
    "run": ("ptxc.cli.run", "run_command"),                  # `ptxc run` (docs/runtime.md)
    "check": ("ptxc.cli.check", "check_command"),            # `ptxc check` (docs/check.md)
    "inject": ("ptxc.cli.inject", "inject_command"),         # `ptxc inject` (docs/inject.md)
    "occupancy": ("ptxc.cli.occupancy", "occupancy_command"),    # `ptxc occupancy` (docs/gpus.md)
    "predict": ("ptxc.cli.predict", "predict_command"),      # `ptxc predict` (docs/predict.md)
    "calibrate": ("ptxc.cli.calibrate", "calibrate_command"),    # `ptxc calibrate` (docs/predict.md)
})


# ------------------------------------------------------------------ main

def main(argv: list[str] | None = None) -> int:
    """Console-script entry point (``ptxc``). Run as the program (no
    ``argv``), it ends with :func:`fast_exit`."""
    global _AS_PROGRAM
    _AS_PROGRAM = argv is None
    try:
        code = cli.main(args=argv, prog_name="ptxc", standalone_mode=True) or 0
    except SystemExit as e:
        if argv is not None or not isinstance(e.code, (int, type(None))):
            raise
        code = e.code or 0
    except BrokenPipeError:
        _silence_stdout()
        code = EXIT_ERROR
    if argv is None:
        fast_exit(code)
    return code


_AS_PROGRAM = False       # main() runs as the program and ends with fast_exit


def kernel_jobs(jobs: int | None) -> int:
    """Processes for the kernels of one module (ptxc/profile/fork.py): --jobs,
    else every core; 1 (no fork) when the CLI runs in-process (main(argv))."""
    if not _AS_PROGRAM:
        return 1
    if jobs:
        return jobs
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def pause_gc() -> None:
    """No cyclic garbage collection for the rest of a command that builds a
    large IR and then ends (``ptxc profile``), when the CLI runs as the
    program. The parser pauses the collector (parser.py); the first
    allocation after it resumes sets off a pass over every object the parse
    made (~0.03 s of CPU for the XLA module of the corpus), and the later
    ones find nothing to free either: the IR lives until the process ends
    and the rest is freed by reference counting. Called in-process
    (``main(argv)``, the tests) it does nothing."""
    if _AS_PROGRAM:
        gc.disable()


def fast_exit(code: int) -> None:
    """End the process without freeing every object one by one: tearing down
    the IR of a large module costs as much as slicing it (~0.12 s of CPU for
    the XLA module of the corpus). atexit handlers still run and the standard
    streams are flushed; nothing else is left to write."""
    import atexit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":  # python -m ptxc.cli.main (or python -m ptxc.cli)
    sys.exit(main())

