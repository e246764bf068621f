"""A batch worker for tests/test_profile_batch.py: ``profile_file``, except
that the process kills itself with SIGSEGV on a file whose name starts with
``crash`` (a crash in native code, which Python cannot catch). It lives in a
module of its own so that spawned worker processes can import it by name."""
from __future__ import annotations

import os
import signal

from ptxc.profile.batch import profile_file


def crash_on_name(path: str, options: dict, timings: bool = False) -> dict:
    if os.path.basename(path).startswith("crash"):
        os.kill(os.getpid(), signal.SIGSEGV)
    return profile_file(path, options, timings)
