"""``ptxc passes``: every registered pass with its one-line summary (and,
with ``-v``, its options: docs/user-guide.md).
"""
from __future__ import annotations

import click


@click.command("passes")
@click.option("-v", "--verbose", is_flag=True, help="Also list each pass's options.")
def passes_command(verbose):
    """List every pass with its one-line summary."""
    from ptxc.passes.registry import pass_names
    names = pass_names()
    width = max((len(n) for n in names), default=0)
    for name in names:
        cls, problem = _load_pass(name)
        if cls is None:
            click.echo(f"  {name:<{width}}  (not available{': ' + problem if verbose and problem else ''})")
            continue
        click.echo(f"  {name:<{width}}  {getattr(cls, 'summary', '') or ''}".rstrip())
        if verbose:
            for f in cls.options():
                default = _field_default(f)
                typ = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
                allowed = cls.allowed(f.name) if hasattr(cls, "allowed") else ""
                click.echo(f"  {'':<{width}}    {f.name.replace('_', '-')}: {typ}"
                           + (f" = {default!r}" if default is not None else "")
                           + (f"  ({allowed})" if allowed else ""))


def _load_pass(name: str):
    from ptxc.passes.registry import get_pass_class
    try:
        return get_pass_class(name), ""
    except Exception as e:  # noqa: BLE001 - a pass being written must not break the list
        return None, f"{type(e).__name__}: {e}"


def _field_default(f):
    import dataclasses
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return None
