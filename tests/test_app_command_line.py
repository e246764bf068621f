"""The command lines of `ptxc run`, `ptxc check` and `ptxc inject` (issue
26, item 4): the options before the program are ptxc's and are parsed as
options, so a misspelt one is a usage error (exit status 2, click's "No
such option" with its "Did you mean" suggestion), never taken for the
program; everything from the program on is the application's and passes
through untouched, with or without `--`.

The pass-through tests run a shell script as the "application" (it makes
no CUDA call, so no nvcc is needed).
"""
from __future__ import annotations

import subprocess
import sys

import pytest

ECHO = ["sh", "-c", 'echo "$@"', "sh"]      # prints its arguments


def ptxc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("args,line", [
    (["run", "--mdoe", "full", "--", "./app"],
     "Error: No such option '--mdoe'. Did you mean '--mode'?"),
    (["check", "--toool", "memcheck", "--", "./app"],
     "Error: No such option '--toool'. Did you mean '--tool'?"),
    (["check", "--metrics", "--", "./app"],
     "Error: No such option '--metrics'."),
    (["inject", "--runz", "3", "--", "./app"],
     "Error: No such option '--runz'. Did you mean '--runs'?"),
])
def test_unknown_option_before_the_program_is_a_usage_error(args, line):
    r = ptxc(*args)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines()[-1] == line
    assert "no such program" not in r.stderr


@pytest.mark.parametrize("command", ["run", "check"])
@pytest.mark.parametrize("dashes", [[], ["--"]])
def test_options_after_the_program_are_the_applications(command, dashes, tmp_path):
    r = ptxc(command, "-o", str(tmp_path / "report.txt"), *dashes, *ECHO,
             "--flag", "--mode", "x", "-o", "y", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "--flag --mode x -o y\n"
