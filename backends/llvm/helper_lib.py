"""Out-of-line helpers compiled apart from the kernels, once.

The helpers of the warp-level matrix instructions (``ptxc_mma_*``: the
arithmetic of one mma/wmma form; ``ptxc_mx_*``: wmma.load/store lane loops)
and of the texture and surface fetches (``ptxc_tx_*``, ``ptxc_sf_*``) are
functions of a fixed size that do all of those instructions' work. In the
kernel's LLVM module they were compiled at the kernel's level, level 0 for
every big kernel and for every kernel's first launches (tiered JIT,
docs/performance.md): without inlining, with every value in a stack slot.
Compiled at O2 instead, tensor-core GEMMs ran 4-6 times and texture
stencils 3-4 times faster (docs/performance.md, "Tensor-core and texture
kernels").

So ``module_text_of`` (codegen.py) leaves them out of the kernel's module
and declares the ones the kernel calls (its *entries*); ``objects`` compiles
each entry, with the helpers it calls, as an LLVM module of its own at
LIB_LEVEL (the entry external, its callees internal, so two entries'
objects in one engine never define a symbol twice), keeps the object in the
process and in the on-disk object cache (objcache.py) under the hash of its
text, and jit.py adds it to the kernel's execution engine. The code is the
same IR the kernel module held, so results are bit for bit the same.

The memory counters' helpers (``COUNTERS``: instruments/memcount_ir.py and
memcount_fast.py, a few hundred lines of 32-lane vector code called by every
counted access under ``--clock model``, the default) are library entries
too, compiled at the level of the kernel that calls them (entry_level):
once per process and level instead of once in every kernel's module (about
10 ms each at level 0, 18 ms a kernel), and ahead of the first kernel by
``ptxc run``'s warm-up thread (jit.precompile_helpers, warm_up.py).
So is ``ptxc_resolve`` (prelude_ir.RESOLVE: the segment-table lookup of a
global or generic access's lanes, 6.5 ms of level-0 machine code a kernel)
in level-0 code, where it is a call anyway (ops/resolve.py adds it to
the generator's helpers); optimised code keeps its own copy to inline.
So is level-0 code's lane-shape test of the memory fast path
(ops/outlined.py, ``ptxc_shapes{N}``: 110 lines of vector code, about 3 ms
of machine code a kernel); optimised code has its code inline. (The
per-lane arms, ``ptxc_slow_*``, stay in the kernel's module: as entries,
each global one compiled its own copy of ``ptxc_resolve`` and every entry
is a module of its own; measured slower, docs/performance.md.)
``PTXC_HELPERS_APART=0`` keeps all of them in each kernel's module (the
code before, for before/after runs; tests/test_counter_helpers.py compares
both).
"""
from __future__ import annotations

import hashlib
import os
import re
import threading

PREFIXES = ("ptxc_mma_", "ptxc_mx_", "ptxc_tx_", "ptxc_sf_")
# the memory counters' helpers (instruments/memcount_ir.py, memcount_fast.py)
# and the segment-table lookup of level-0 code (prelude_ir.RESOLVE)
COUNTERS = ("ptxc_mem_global", "ptxc_mem_atomic", "ptxc_mem_shared_", "ptxc_firsts",
            "ptxc_distinct", "ptxc_bank_tx", "ptxc_resolve",
            "ptxc_shapes")      # level-0 code's lane-shape test (ops/outlined.py)
LIB_LEVEL = 2
KEY = "helper_lib 5"        # part of every kernel's cache key: how kernels link to helpers
CALL = re.compile(r"@(ptxc_\w+)\(")
_objs: dict[str, bytes] = {}
_lock = threading.Lock()


def is_lib(name: str) -> bool:
    return name.startswith(PREFIXES) or is_counter(name)


def is_counter(name: str) -> bool:
    return name.startswith(COUNTERS) and helpers_apart()


def entry_level(entry: str, kernel_level: int) -> int:
    """A counter helper (or ``ptxc_resolve``) is compiled at its kernel's
    level (once per process and level, not once per kernel: at level 0, to
    compile fast, a kernel's first launches), the others at LIB_LEVEL."""
    return kernel_level if is_counter(entry) else LIB_LEVEL


def helpers_apart() -> bool:
    """The memory counters' helpers and level-0 code's ``ptxc_resolve`` in
    the library too (the default), or in each kernel's module at its level
    (PTXC_HELPERS_APART=0: the code before, for before/after runs)."""
    return os.environ.get("PTXC_HELPERS_APART") != "0"


def split(helpers: dict) -> tuple[dict, dict]:
    """({name: text} kept in the kernel module, {name: text} of the library)."""
    lib = {n: t for n, t in helpers.items() if is_lib(n)}
    return {n: t for n, t in helpers.items() if n not in lib}, lib


def entries(texts: list, lib: dict) -> list[str]:
    """The library functions that ``texts`` (kernel functions, kept helpers) call."""
    out = []
    for text in texts:
        out.extend(n for n in CALL.findall(text) if n in lib and n not in out)
    return out


def define_line(text: str, name: str) -> str:
    """The ``define`` line of ``@name`` in a helper's text (which may hold
    other functions too)."""
    return next(line for line in text.splitlines() if line.startswith("define") and f"@{name}(" in line)


def declaration(text: str, name: str) -> str:
    """``declare RT @name(T1, T2, ...)`` of the definition of ``@name`` in ``text``."""
    head = define_line(text, name).split("{", 1)[0]
    head = head[:head.rindex(")") + 1]
    rt_name, params = head.split("(", 1)
    words = rt_name.split()[1:]                      # drop "define"
    while words and words[0] in ("internal", "private", "dso_local"):
        words = words[1:]
    types = [" ".join(p.split()[:-1]) for p in split_params(params[:-1])]
    return f"declare {' '.join(words)}({', '.join(types)})"


def split_params(params: str) -> list[str]:
    """The parameters of a list, split at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += ch in "{<[" and 1 or (ch in "}>]" and -1) or 0
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def closure(entry: str, lib: dict) -> list[str]:
    """``entry`` and the library functions it calls, transitively."""
    seen, todo = [entry], [entry]
    while todo:
        for n in CALL.findall(lib[todo.pop()]):
            if n in lib and n not in seen:
                seen.append(n)
                todo.append(n)
    return seen


def symbol(entry: str, lib: dict) -> str:
    """The entry's external name: its name and the hash of its code (and its
    callees'), so that a kernel object (from the cache, or of another
    version of ptxc) only ever links to the helper it was compiled against."""
    h = hashlib.sha256("\n".join(lib[n] for n in closure(entry, lib)).encode()).hexdigest()[:12]
    return f"{entry}_{h}"


def renamed(texts: list, lib: dict) -> tuple[list, list]:
    """(``texts`` calling the entries by their symbols, the declarations)."""
    decls, out = [], list(texts)
    for e in entries(texts, lib):
        sym = symbol(e, lib)
        out = [t.replace(f"@{e}(", f"@{sym}(") for t in out]
        decls.append(declaration(lib[e], e).replace(f"@{e}(", f"@{sym}(", 1))
    return out, decls


def entry_module(entry: str, lib: dict, decls) -> str:
    """The LLVM module of one entry: external (named by ``symbol``), its
    callees internal."""
    from ptxc.backends.llvm.prelude_ir import PRELUDE_DECLS
    funcs = [lib[n] for n in closure(entry, lib)]
    head = define_line(funcs[0], entry)
    public = head.replace("define internal ", "define ", 1).replace(" alwaysinline", "", 1)
    funcs[0] = funcs[0].replace(head, public, 1).replace(f"@{entry}(", f"@{symbol(entry, lib)}(")
    body = "\n".join(funcs)
    used = [d for d in sorted(set(PRELUDE_DECLS) | set(decls)) if declared(d) in body]
    return "\n\n".join([*funcs, *used]) + "\n"


def declared(decl: str) -> str:
    """``@name`` of a declaration or global definition line."""
    return "@" + decl.split("@", 1)[1].split("(", 1)[0].split(" ", 1)[0]


def apart(group: list, unique: dict) -> list[list]:
    """``group`` (function names, ``unique``: name -> (generator, text)) cut
    so that a function calling the library is alone in its object: a cached
    object is found by any of its functions' keys and brought into an engine
    whole, and only the functions asked for get their helpers linked (an
    object holding another function's call to a helper not linked would not
    load)."""
    plain = [n for n in group if not any(is_lib(h) for h in unique[n][0].helpers)]
    return ([plain] if plain else []) + [[n] for n in group if n not in plain]


def objects(gens: list, emit, salt: list) -> list[bytes]:
    """Object code of every library entry the generators ``gens`` call:
    compiled by ``emit(text, level, name)`` (entry_level), or found in the
    process or on disk (``salt``: host CPU, features and LLVM version, part
    of the cache key)."""
    out = []
    for g in gens:
        kept, lib = split(g.helpers)
        for e in entries([g.function_text(), *kept.values()], lib):
            obj = entry_object(e, lib, g.decls, entry_level(e, g.level), emit, salt)
            if obj not in out:
                out.append(obj)
    return out


def entry_object(entry: str, lib: dict, decls, level: int, emit, salt: list) -> bytes:
    """The object code of one entry's module at ``level``: from this
    process, from the on-disk cache, or compiled (and kept in both)."""
    from ptxc.backends.llvm import objcache
    text = entry_module(entry, lib, decls)
    key = objcache.key([text, "helper", str(level), *salt])
    with _lock:
        obj = _objs.get(key)
        if obj is None:
            obj = next(iter(objcache.lookup([key])), None)
            if obj is None:
                obj = emit(text, level, entry)
                objcache.store(obj, [key])
            _objs[key] = obj
    return obj
