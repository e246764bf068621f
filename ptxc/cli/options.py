"""What several ``ptxc`` commands share: the option choices, ``--grid`` /
``--block`` and ``--arg NAME=VALUE`` parsing, the launch option dict of the
pass pipeline (docs/launch.md), reading PTX (a file or ``-``) and writing
the output, with one-line errors for unreadable files.
"""
from __future__ import annotations

import sys

import click

from ptxc.errors import PtxcError


EMIT_CHOICES = ("none", "ir", "ptx", "dot")
FORMAT_CHOICES = ("text", "json", "csv")
MODE_CHOICES = ("hybrid", "full")


class InputError(PtxcError):
    """A file that cannot be read or written: a one-line ``ptxc: error: ...``."""

    def headline(self) -> str:
        return f"ptxc: error: {self.message}"


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


def dim_callback(ctx, param, value):
    if value is None:
        return None
    return parse_dim(value, "'--" + param.name + "'")


def arg_callback(ctx, param, values):
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


def read_module(path: str):
    """Parse FILE (or stdin for '-') into a Module."""
    from ptxc.frontend.parser import parse_module
    if path == "-":
        try:
            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        except OSError as e:
            raise InputError(f"cannot read standard input: {e.strerror or e}") from None
        return parse_module(decode_source(data, "<stdin>"), "<stdin>")
    # Check readability ourselves so a missing file is a one-line message,
    # whatever the parser's loader does.
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise InputError(f"cannot read '{path}': {e.strerror or e}") from None
    return parse_module(decode_source(data, path), path)


def decode_source(data, filename: str) -> str:
    """Decode PTX bytes as UTF-8; a bad byte is an error at its line and column."""
    if isinstance(data, str):
        return data
    from ptxc.frontend.parser import decode
    return decode(data, filename)


def ensure_nl(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def write_output(text: str, output: str | None) -> None:
    if output is None or output == "-":
        if text:
            sys.stdout.write(ensure_nl(text))
            sys.stdout.flush()
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(ensure_nl(text) if text else "")
    except OSError as e:
        raise InputError(f"cannot write '{output}': {e.strerror or e}") from None


def print_warnings(module, start: int = 0) -> int:
    warnings = list(getattr(module, "warnings", None) or [])
    for w in warnings[start:]:
        echo_err(w)
    return len(warnings)


def echo_err(text: str) -> None:
    click.echo(text, err=True)


# ----------------------------------------------------------- option groups
# Options several commands declare alike; each command keeps its own help
# text (what the option means for that command).

def max_steps_option(help: str | None = None):
    return click.option("--max-steps", type=click.IntRange(min=1), default=None, metavar="N",
                        help=help)


def threads_option(help: str | None = None):
    return click.option("--threads", type=click.IntRange(min=1), default=None, metavar="N",
                        help=help)


def ptx_option(help: str = "Use this PTX module instead of the PTX in the application's fat "
                           "binary."):
    return click.option("--ptx", type=click.Path(exists=True, dir_okay=False), default=None,
                        help=help)


def keep_ptx_option(help: str):
    return click.option("--keep-ptx", type=click.Path(file_okay=False), default=None,
                        metavar="DIR", help=help)


def regs_option(help: str = "Registers per thread (overrides ptxas / the estimate)."):
    return click.option("--regs", type=click.IntRange(min=0, max=255), default=None,
                        metavar="N", help=help)


def memory_counters_option(help: str):
    return click.option("--memory-counters", is_flag=True, help=help)


def bank_bytes_option(help: str):
    return click.option("--bank-bytes", type=click.Choice(["4", "8"]), default=None, help=help)


def html_option(help: str = "Also write the self-contained HTML report (docs/report.md)."):
    return click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
                        metavar="FILE", help=help)


def topdown_option(help: str):
    return click.option("--topdown", is_flag=True, help=help)


def value_profile_option(help: str):
    return click.option("--value-profile", is_flag=True, help=help)
