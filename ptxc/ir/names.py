"""The one naming rule for kernels and their parameters (docs/user-guide.md,
"Kernel and parameter names").

Every option that takes a kernel (``opt``/``predict``/``inject``/
``occupancy``/``profile --kernel``, ``profile --launch K:...`` and
``--arg K:...``, launch files, ``print-ir{function=...}``) resolves it with
``resolve``: the first of these that names exactly one kernel wins,

1. the PTX name (``_Z4vaddPKfS0_Pfi``, or the C name of an ``extern "C"``
   kernel);
2. the demangled signature as c++filt prints it, with or without the return
   type of a template (``vadd(float const*, float const*, float*, int)``);
3. the name with template arguments, qualified or not (``ns::k<float>``,
   ``k<float>``);
4. the name without them, qualified or not (``ns::k``, ``k``: the base name);

spaces do not count. A form that names several kernels is an error listing
them (``kernel name 'k' is ambiguous``), and a name that names none an error
listing every kernel, demangled with its PTX name in brackets.

A parameter (``--arg NAME=VALUE``, launch files, ``launch(args={...})``) is
its index, its PTX name (``vadd_param_0``), its source name when the PTX has
DWARF (``nvcc -G``: ptxc/ir/dwarf_names.py), or the end of its PTX name after
an ``_`` (``param_0``). The demangled signature gives the parameters' types,
not their names: without ``-G`` there are no source names.

Names are demangled by ptxc/ir/demangle.py (no c++filt needed for function
signatures), else by c++filt when it is installed, else left as they are;
``short`` shortens a demangled name for tables and progress lines.
"""
from __future__ import annotations

import functools

from ptxc.errors import PtxcError
from ptxc.ir.demangle import Demangled, parse

LIST_LIMIT = 20           # kernels listed in an error before "... and N more"
_readable: dict[str, str] = {}


# --------------------------------------------------------------- demangling
def demangle_all(names) -> dict:
    """{name: readable name}: demangled by ptxc's demangler, else by c++filt
    (one call for all of them) when it is installed, else as given."""
    names = list(dict.fromkeys(names))
    todo = []
    for n in names:
        if n in _readable:
            continue
        d = parse(n)
        if d is not None:
            _readable[n] = d.text
        elif n.startswith("_Z"):
            todo.append(n)
        else:
            _readable[n] = n
    if todo:
        _readable.update(_cxxfilt(todo))
    from ptxc.ir import numba_names         # numba-cuda's kernels: their Python names
    for n in names:
        if numba_names.is_numba(_readable[n]):
            _readable[n] = numba_names.pythonic(_readable[n])
    return {n: _readable[n] for n in names}


def demangle(name: str) -> str:
    return demangle_all([name])[name]


def _cxxfilt(names: list) -> dict:
    import shutil
    import subprocess
    tool = shutil.which("c++filt")
    if tool:
        try:
            out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True,
                                 text=True, timeout=30).stdout.splitlines()
            if len(out) == len(names):
                return dict(zip(names, out))
        except (OSError, subprocess.SubprocessError):
            pass
    return {n: n for n in names}


def parts(name: str) -> Demangled | None:
    """The demangled parts of ``name`` (demangle.Demangled), from ptxc's
    demangler or, for what it does not read, from c++filt's text; None for
    a name that is not mangled."""
    d = parse(name)
    if d is not None and "[abi:v" in d.text:        # numba-cuda's: by the Python name
        return _from_text(demangle(name))
    if d is not None or not name.startswith("_Z"):
        return d
    text = demangle(name)
    return None if text == name else _from_text(text)


def _from_text(text: str) -> Demangled:
    """Parts of a c++filt rendering: the name is what stands before the
    parameter list, after the return type."""
    depth, cut = 0, len(text)
    for i, ch in enumerate(text):
        if ch in "<(":
            if ch == "(" and depth == 0 and not text.startswith("(anonymous", i):
                cut = i
                break
            depth += 1
        elif ch in ">)":
            depth -= 1
    head = text[:cut]
    depth, start = 0, 0
    for i, ch in enumerate(head):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == " " and depth == 0:
            start = i + 1
    name = head[start:]
    last = _split_scope(name)[-1]
    base = last.split("<", 1)[0]
    plain = name[:len(name) - len(last)] + base
    return Demangled(text, name, plain, last, base, None)


def _split_scope(name: str) -> list:
    out, depth, cur = [], 0, ""
    i = 0
    while i < len(name):
        ch = name[i]
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if depth == 0 and name.startswith("::", i):
            out.append(cur)
            cur, i = "", i + 2
            continue
        cur += ch
        i += 1
    return out + [cur]


def described(name: str) -> str:
    """``vadd(float const*, ...) [_Z4vaddPKfS0_Pfi]``, or the name alone when
    it is not mangled."""
    readable = demangle(name)
    return name if readable == name else f"{readable} [{name}]"


def listing(names, limit: int = LIST_LIMIT) -> str:
    """Kernels for an error message: each described, comma separated."""
    names = list(dict.fromkeys(names))
    if not names:
        return "none"
    demangle_all(names)
    text = ", ".join(described(n) for n in names[:limit])
    if len(names) > limit:
        text += f", ... and {len(names) - limit} more"
    return text


@functools.lru_cache(maxsize=4096)
def short(name: str, width: int = 40) -> str:
    """The readable name in at most ``width`` characters: whole, else
    without the parameters (``k<float>(...)``), else without the namespaces
    and template arguments (``k<...>(...)``), else cut (``...``). Cached:
    every launch names its kernel (crash label, progress line), and a
    name's readable form never changes once known (``_readable``)."""
    text = demangle(name)
    if len(text) <= width:
        return text
    d = parts(name)
    if d is not None:
        for cand in (d.name + "(...)", d.last + "(...)",
                     d.base + ("<...>" if d.last != d.base else "") + "(...)"):
            if len(cand) <= width:
                return cand
        text = d.base
    return text if len(text) <= width else text[:max(width - 3, 1)] + "..."


# ------------------------------------------------------------------ kernels
def norm(text: str) -> str:
    return "".join(text.split())


def keys(name: str) -> list:
    """The keys of ``name`` at each level of the rule (module doc), spaces removed."""
    d = parts(name)
    if d is None:
        return [{name}]
    full = {norm(d.text)}
    if d.params is not None:
        full.add(norm(f"{d.name}({', '.join(d.params)})"))
    elif "(" in d.text:
        full.add(norm(d.text[d.text.find(d.name):]))
    return [{name}, full, {norm(d.name), norm(d.last)}, {norm(d.plain), norm(d.base)}]


def level(name: str, key: str) -> int | None:
    """The first level of the rule at which ``key`` names ``name``, or None."""
    k = norm(key)
    for i, ks in enumerate(keys(name)):
        if (key if i == 0 else k) in ks:
            return i
    return None


def matches(name: str, key: str) -> bool:
    return level(name, key) is not None


def resolve(names, key: str, where: str = "", what: str = "kernel", scope: str = "") -> str:
    """The one name of ``names`` that ``key`` names by the rule (module
    doc); a PtxcError listing the candidates when it names several, or
    every name when it names none. ``where`` prefixes the message
    (``file.ptx: ``), ``scope`` follows the name (`` in file.ptx``)."""
    names = list(dict.fromkeys(names))
    found = {}
    for n in names:
        lv = level(n, key)
        if lv is not None:
            found.setdefault(lv, []).append(n)
    if found:
        hits = found[min(found)]
        if len(hits) == 1:
            return hits[0]
        raise PtxcError(f"{where}{what} name '{key}'{scope} is ambiguous: it names "
                        f"{listing(hits)} (give the signature or the PTX name)")
    raise PtxcError(f"{where}no {what} named '{key}'{scope} ({what}s: {listing(names)})")


def find_kernel(module, key):
    """The kernel of ``module`` that ``key`` names (None: the module's only kernel)."""
    kernels = module.kernels
    if key is None:
        if len(kernels) == 1:
            return kernels[0]
        raise PtxcError(f"{module.filename}: choose a kernel with --kernel "
                        f"(kernels: {listing(k.name for k in kernels)})")
    name = resolve([k.name for k in kernels], key, f"{module.filename}: ")
    return next(k for k in kernels if k.name == name)


def find_function(module, key):
    """The function (kernel or ``.func`` with a body) that ``key`` names."""
    funcs = [f for f in module.functions if not f.is_decl]
    name = resolve([f.name for f in funcs], key, f"{module.filename}: ", "function")
    return next(f for f in funcs if f.name == name)


# --------------------------------------------------------------- parameters
def source_names(fn) -> list:
    """Each parameter's source name from the DWARF (``-G``), or None."""
    if fn.module is None:
        return [None] * len(fn.params)
    from ptxc.ir.dwarf_names import param_names
    known = param_names(fn.module)
    return [known.get(p.name) for p in fn.params]


def param_label(fn, i: int) -> str:
    """How messages name parameter ``i``: its source name (``-G``), else its
    PTX name without the kernel's name in front (``param_0``)."""
    src = source_names(fn)[i]
    if src:
        return src
    name, prefix = fn.params[i].name, fn.name + "_"
    return name[len(prefix):] if name.startswith(prefix) and len(name) > len(prefix) else name


def param_listing(fn) -> str:
    """``0 a, 1 b, 2 n`` (or ``0 param_0, ...``): what ``--arg`` accepts."""
    return ", ".join(f"{i} {param_label(fn, i)}" for i in range(len(fn.params))) or "none"


def kernel_label(fn, width: int = 100) -> str:
    """``kernel NAME`` as messages start: the demangled name, shortened."""
    return f"kernel {short(fn.name, width)}"


def param_index(fn, key, error=None) -> int:
    """The index of the parameter ``key`` names (module doc). ``error``
    makes the exception from a one-line message (default: a PtxcError at
    the kernel)."""
    error = error or (lambda msg: PtxcError(f"{kernel_label(fn)}: {msg}", fn.loc))
    params = fn.params
    if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
        k = int(key)
        if 0 <= k < len(params):
            return k
        raise error(f"no parameter number {k} (parameters: {param_listing(fn)})")
    for i, p in enumerate(params):
        if p.name == key:
            return i
    hits = [i for i, s in enumerate(source_names(fn)) if s == key]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        hits = [i for i, p in enumerate(params) if p.name.endswith("_" + key)
                or p.name.endswith(key)]
        if len(hits) == 1:
            return hits[0]
    if hits:
        raise error(f"parameter name '{key}' is ambiguous: it names "
                    + ", ".join(f"{i} {params[i].name}" for i in hits))
    raise error(f"no parameter named '{key}' (parameters: {param_listing(fn)})")
