"""SQLite report files (``ptxc run --report``, ``ptxc profile --report``,
``ptxc inject --report``): a fresh database with a key/value meta table, and
tables written from rows of dicts whose column types come from a template
row (Python's sqlite3 module; SQLite's INTEGER / REAL / TEXT affinities)."""
from __future__ import annotations

import os
import sqlite3


def new_database(path: str, meta: dict, meta_table: str = "meta"):
    """A connection to a new database at ``path`` (an existing file is
    replaced) holding ``meta`` as (key, value) text rows in ``meta_table``."""
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute(f'CREATE TABLE "{meta_table}" ("key" TEXT PRIMARY KEY, "value" TEXT)')
    db.executemany(f'INSERT INTO "{meta_table}" VALUES (?, ?)',
                   [(k, None if v is None else str(v)) for k, v in meta.items()])
    return db


def sql_type(v) -> str:
    if isinstance(v, (bool, int)):
        return "INTEGER"
    if isinstance(v, float):
        return "REAL"
    return "TEXT"


def table(db, name: str, rows: list[dict], template: dict, key: str | None = None) -> None:
    """Table ``name`` with ``template``'s columns (types from its values; a
    None there takes the type of the first row's value) and ``rows``."""
    cols = list(template)
    types = {c: sql_type(template[c]) for c in cols}
    for row in rows:
        for c in cols:
            if template[c] is None and row.get(c) is not None:
                types[c] = sql_type(row[c])
    defs = ", ".join(f'"{c}" {types[c]}' + (" PRIMARY KEY" if c == key else "") for c in cols)
    db.execute(f'CREATE TABLE "{name}" ({defs})')
    marks = ", ".join("?" for _ in cols)
    db.executemany(f'INSERT INTO "{name}" VALUES ({marks})',
                   [tuple(row.get(c) for c in cols) for row in rows])
