# -*- Python -*-
# lit configuration for ptxc's regression tests (PyPI `lit` + `filecheck`).
#
# Run from the repository root with the `lit` script of the Python
# environment where ptxc is installed (there is no `python -m lit`):
#     .venv/bin/lit -sv lit-tests
#
# One folder per pass (lit-tests/<pass-name>/); shared inputs that are not
# tests go in an `Inputs/` folder. Substitutions:
#     %ptxc     the ptxc console script of the running interpreter
#     %python   the running interpreter
#     %corpus   the shared PTX corpus (<repo>/../shared/corpus); tests using it
#               say `REQUIRES: corpus`
#     %ptxas    ptxas (tests using it say `REQUIRES: ptxas`)
#     FileCheck the PyPI `filecheck` script (so RUN lines read like LLVM's)
# plus lit's own %s (this test file), %S (its folder), %t / %T (temporaries).
import os
import shutil
import sys

import lit.formats

config.name = "ptxc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ptx", ".test"]
config.excludes = ["Inputs", "Output", "lit.cfg.py", "README.md"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

repo_root = os.path.dirname(config.test_source_root)
bin_dir = os.path.dirname(sys.executable)

# The interpreter's bin/ first: lit scrubs the environment, and the ptxc and
# filecheck scripts installed next to this interpreter are the ones to test.
config.environment["PATH"] = os.pathsep.join(
    [bin_dir] + [p for p in os.environ.get("PATH", "").split(os.pathsep) if p])
for var in ("PTXC_DEBUG", "HOME", "TMPDIR", "LANG", "LC_ALL"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment.setdefault("PYTHONIOENCODING", "utf-8")


def _quote(path):
    return '"' + path + '"' if " " in path else path


def _script(name):
    path = os.path.join(bin_dir, name)
    return path if os.path.exists(path) else shutil.which(name)


ptxc_script = _script("ptxc")
ptxc_cmd = _quote(ptxc_script) if ptxc_script else _quote(sys.executable) + " -m ptxc.cli"
filecheck = _script("filecheck") or "filecheck"

# Config substitutions are applied before lit's built-in %s/%S/%p, so the
# longer %ptxc / %python names are safe from lit's %p.
config.substitutions.append(("%ptxc", ptxc_cmd))
config.substitutions.append(("%python", _quote(sys.executable)))
config.substitutions.append(("FileCheck", _quote(filecheck)))

corpus = os.path.normpath(os.path.join(repo_root, "..", "shared", "corpus"))
config.substitutions.append(("%corpus", _quote(corpus)))
if os.path.isdir(corpus):
    config.available_features.add("corpus")

ptxas = shutil.which("ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _quote(ptxas)))
if shutil.which("nvcc"):
    config.available_features.add("nvcc")
if os.environ.get("CI"):
    config.available_features.add("ci")
