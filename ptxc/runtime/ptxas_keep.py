"""ptxc's ptxas for Triton: the real ptxas, and the PTX of each cubin it makes.

Run as a script (no ptxc import: it starts once per kernel Triton compiles)
by the ``ptxas`` wrappers that ``ptxc run`` writes (cubin_ptx.py) and names
in ``TRITON_PTXAS_PATH`` and ``TRITON_PTXAS_BLACKWELL_PATH``::

    python ptxas_keep.py STORE REAL_PTXAS ARGS...

It runs ``REAL_PTXAS ARGS...`` and, when that succeeds and ARGS name one
PTX input (``*.ptx``) and an output (``-o FILE``, ``--output-file[=]FILE``),
copies the input to ``STORE/<sha256 of the output>.ptx``, where ptxc's
module loader finds it when the program loads that cubin.
"""
import hashlib
import os
import subprocess
import sys


def files(args):
    """(the PTX input, the output) that ptxas ``args`` name (None where not one each)."""
    out, inputs, i = None, [], 0
    while i < len(args):
        a = args[i]
        if a in ("-o", "--output-file") and i + 1 < len(args):
            out, i = args[i + 1], i + 2
            continue
        if a.startswith("--output-file="):
            out = a.split("=", 1)[1]
        elif a.endswith(".ptx") and not a.startswith("-"):
            inputs.append(a)
        i += 1
    return (inputs[0] if len(inputs) == 1 else None), out


def keep(store, ptx, cubin):
    """Copy ``ptx`` to ``store``, named by the SHA-256 of the file ``cubin``."""
    with open(cubin, "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()
    with open(ptx, "rb") as f:
        text = f.read()
    os.makedirs(store, exist_ok=True)
    tmp = os.path.join(store, f".{key}.{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(text)
    os.replace(tmp, os.path.join(store, key + ".ptx"))    # whole, or not at all


def main(argv):
    store, real, args = argv[0], argv[1], argv[2:]
    status = subprocess.call([real] + args)
    ptx, out = files(args)
    if status == 0 and ptx and out and os.path.isfile(out):
        try:
            keep(store, ptx, out)
        except OSError as e:       # the compile itself succeeded: say so, go on
            print(f"ptxc: cannot keep the PTX of {out}: {e.strerror}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
