"""Another git tree of ptxc in this process: the before/after benches
(parallel_ctas.py, tc_kernels.py) run the old commit's code from a
worktree beside the new one, in the same venv and the same run.

``old_tree(commit)`` makes (once) a detached worktree of ``commit`` in
/tmp; ``use_tree(root)`` points the venv's editable install of ptxc (the
finder setuptools writes for ``pip install -e``) at ``root`` before ptxc is
imported; ``run_worker(script, root, args, env)`` runs a bench's
``--worker`` half on ``root`` in a child process and returns the JSON it
prints last.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def old_tree(commit: str) -> Path:
    path = Path("/tmp") / f"ptxc-old-{commit[:7]}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit],
                       check=True, capture_output=True)
    return path


def use_tree(root: str) -> None:
    import __editable___ptxc_0_1_0_finder as finder      # the venv's editable install
    here = str(ROOT)
    finder.MAPPING.update({k: v.replace(here, root, 1) for k, v in finder.MAPPING.items()})


def run_worker(script: str, root: Path, args: list, env: dict) -> dict:
    """``python SCRIPT --worker ROOT ARGS...`` with ``env`` added to the
    environment; the JSON of its last line (exits with its stderr if it fails)."""
    proc = subprocess.run([sys.executable, script, "--worker", str(root), *map(str, args)],
                          capture_output=True, text=True, env=dict(os.environ, **env),
                          cwd=str(ROOT))
    if proc.returncode != 0:
        sys.exit(f"worker on {root} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
