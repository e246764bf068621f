"""The ``ptxc`` command group and its entry point ``main``.

    ptxc COMMAND [OPTIONS] ...   (ptxc --help lists the commands)
    ptxc --version

Each command lives in a module of its own (opt.py, profile.py, passes.py,
run.py ...), imported only when that command runs or ``--help`` lists it
(``PtxcGroup.lazy``); options.py holds what several commands share.

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

from ptxc.version import __version__  # noqa: E402
from ptxc.cli import process  # noqa: E402
from ptxc.cli.options import echo_err  # noqa: E402
from ptxc.errors import PtxcError, render_error  # noqa: E402

EXIT_ERROR = 1        # bad input (PtxcError, unreadable file)
EXIT_USAGE = 2        # click usage errors
EXIT_INTERNAL = 70    # EX_SOFTWARE: a bug in ptxc

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
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit,
                click.exceptions.Abort):
            raise
        except PtxcError as err:
            echo_err(render_error(err))
            ctx.exit(EXIT_ERROR)
        except BrokenPipeError:
            # `ptxc opt ... | head`: stop quietly, like other Unix tools.
            process.silence_stdout()
            ctx.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            echo_err("ptxc: interrupted")
            ctx.exit(130)
        except Exception as err:  # noqa: BLE001 - last line of defence
            echo_err(f"ptxc: internal error: {type(err).__name__}: {err}")
            if os.environ.get("PTXC_DEBUG") == "1":
                import traceback
                echo_err(traceback.format_exc().rstrip("\n"))
            else:
                echo_err("ptxc: (set PTXC_DEBUG=1 for a traceback; please report this)")
            ctx.exit(EXIT_INTERNAL)


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


# ------------------------------------------------------------- commands

PtxcGroup.lazy.update({          # imported when used (PtxcGroup)
    "opt": ("ptxc.cli.opt", "opt_command"),                  # `ptxc opt` (docs/user-guide.md)
    "profile": ("ptxc.cli.profile", "profile_command"),      # `ptxc profile` (docs/profile.md)
    "passes": ("ptxc.cli.passes", "passes_command"),         # `ptxc passes`
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
    process.AS_PROGRAM = argv is None
    try:
        code = cli.main(args=argv, prog_name="ptxc", standalone_mode=True) or 0
    except SystemExit as e:
        if argv is not None or not isinstance(e.code, (int, type(None))):
            raise
        code = e.code or 0
    except BrokenPipeError:
        process.silence_stdout()
        code = EXIT_ERROR
    if argv is None:
        process.fast_exit(code)
    return code



if __name__ == "__main__":  # python -m ptxc.cli.main (or python -m ptxc.cli)
    sys.exit(main())
