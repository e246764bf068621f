"""``ptxc check --kernel-name`` / ``--kernel-name-exclude``: which kernels'
launches are checked, with compute-sanitizer's filter syntax (CUDA Compute
Sanitizer documentation, "Specifying Filters").

A filter is a list of ``key=value`` pairs joined by commas, all of which
must match the kernel's mangled name:

    kernel_name, kne       the complete mangled name (ptxc also accepts the
                           complete demangled one, as its text reports print it)
    kernel_substring, kns  a substring of the mangled name
    regex                  a regular expression searched in the mangled name
                           (the rest of the option is the expression, commas
                           included: give further pairs in further options)

The options may be repeated: a launch is checked when its kernel matches
any ``--kernel-name`` filter (every kernel when none is given) and no
``--kernel-name-exclude`` filter. compute-sanitizer ignores a filter it
cannot read; ptxc refuses it (a usage error). ``--kernel-regex`` and
``--kernel-regex-exclude`` are the names older compute-sanitizer releases
gave these options, with the same syntax.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

KEYS = {"kernel_name": "kne", "kne": "kne", "kernel_substring": "kns", "kns": "kns",
        "regex": "regex"}


@dataclass(frozen=True)
class Filter:
    parts: tuple            # ((key, value or compiled regex), ...)

    def matches(self, mangled: str, demangled: str) -> bool:
        for key, value in self.parts:
            if key == "kne" and value not in (mangled, demangled):
                return False
            if key == "kns" and value not in mangled:
                return False
            if key == "regex" and not value.search(mangled):
                return False
        return True


def parse(spec: str) -> Filter:
    """The filter ``spec``; ValueError says what is wrong with it."""
    parts, rest = [], spec
    while rest:
        key, eq, value = rest.partition("=")
        if not eq:
            raise ValueError(f"'{rest}' is not key=value (keys: kne, kns, regex, kernel_name, "
                             f"kernel_substring)")
        key = key.strip()
        if key not in KEYS:
            raise ValueError(f"unknown key '{key}' (keys: kne, kns, regex, kernel_name, "
                             f"kernel_substring)")
        if KEYS[key] == "regex":           # the rest is the expression, commas and all
            try:
                parts.append(("regex", re.compile(value)))
            except re.error as e:
                raise ValueError(f"regex '{value}': {e}") from None
            break
        value, rest = split_value(value)
        if not value:
            raise ValueError(f"'{key}=' has no value")
        parts.append((KEYS[key], value))
    if not parts:
        raise ValueError("an empty filter")
    return Filter(tuple(parts))


def split_value(text: str) -> tuple[str, str]:
    """(value, the rest after its comma): a comma inside parentheses or
    angle brackets belongs to the value (a demangled name's parameter list,
    ``kne=axpy(float, float*)``)."""
    depth = 0
    for i, c in enumerate(text):
        if c in "(<":
            depth += 1
        elif c in ")>":
            depth = max(depth - 1, 0)
        elif c == "," and depth == 0:
            return text[:i], text[i + 1:]
    return text, ""


class KernelFilter:
    """Is a launch of a kernel (its mangled name) checked?"""

    def __init__(self, include=(), exclude=()):
        self.include = [parse(s) for s in include]
        self.exclude = [parse(s) for s in exclude]
        self._known: dict[str, bool] = {}

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)

    def __call__(self, kernel: str) -> bool:
        if kernel not in self._known:
            from ptxc.report.kernel_names import demangle
            readable = demangle([kernel])[kernel] if any(
                k == "kne" for f in self.include + self.exclude for k, _ in f.parts) else kernel
            inside = not self.include or any(f.matches(kernel, readable) for f in self.include)
            self._known[kernel] = inside and not any(f.matches(kernel, readable)
                                                     for f in self.exclude)
        return self._known[kernel]
