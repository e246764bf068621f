"""``ptxc run --by source`` checked before the application runs: the
per-source-line view needs CUDA line information (``.loc`` directives,
``nvcc -lineinfo`` or ``-G``) in the PTX the application will run.

The fat binaries an application registers at start-up
(``__cudaRegisterFatBinary``, runtime/modules.py) are the containers of its
executable's ``.nv_fatbin`` section (with ``-rdc=true``, the objects' fat
binaries in ``__nv_relfatbin``: runtime/rdc.py), so ptxc reads them from the file
before starting anything, picks each container's PTX as the run would
(fatbin.choose_ptx: the highest architecture the ``--gpu`` model runs) and
looks for ``.loc``. With ``--ptx FILE`` that file is checked instead.
Kernels in shared libraries are not in the executable's section: when the
executable embeds no PTX, nothing can be said before the run (the summary
is then written anyway, with a warning if no launch had line information;
cli/run.py).
"""
from __future__ import annotations

import re

from ptxc.errors import PtxcError

from . import elfinfo, fatbin

LOC = re.compile(rb"^[ \t]*\.loc[ \t]", re.M)


def embedded_ptx(program: str, sm: int) -> list[bytes]:
    """The PTX that each fat binary of ``program`` would run on an sm_``sm``
    GPU ([] when the executable embeds none ptxc can read)."""
    blobs = [b for name in (".nv_fatbin", "__nv_relfatbin")       # (the latter: -rdc=true)
             for b in fatbin.containers(elfinfo.section_bytes(program, name) or b"")]
    out = []
    for blob in blobs:
        try:
            ptx = [e for e in fatbin.ptx_entries(fatbin.parse(blob)) if e.arch <= sm]
            if ptx:
                out.append(max(ptx, key=lambda e: e.arch).data())
        except PtxcError:          # the run says what is wrong with it
            continue
    return out


def refuse_without_lines(program: str, sm: int, ptx_file: str | None = None) -> None:
    """Raise PtxcError when the PTX the run would use is known and none of
    it has ``.loc`` lines (``--by source`` would have nothing to show)."""
    if ptx_file is not None:
        with open(ptx_file, "rb") as f:
            texts, what = [f.read()], ptx_file
    else:
        texts, what = embedded_ptx(program, sm), f"the PTX in {program}"
    if texts and not any(LOC.search(t) for t in texts):
        raise PtxcError(f"--by source needs CUDA line information, and {what} has none (no "
                        f".loc): rebuild with nvcc -lineinfo (or -G), or run without --by source")
