"""One meaning of "the same name" on every database.

A unique name (a person's folder, a model) is stored beside its key, `name_key(name)`, and
the unique index is on the key. The key is computed here, in Python, never by the
database: SQLite's `lower()` folds ASCII only, PostgreSQL's follows its collation, so a
comparison in SQL would mean one thing on one database and another on the other.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import IntegrityError


def name_key(name: str) -> str:
    """What two names share when a person would call them the same: Unicode's compatibility
    caseless match (NFKD and case folding, twice: folding can undo the normal form), then
    NFKC to keep it short, without invisible format characters (soft hyphen, zero-width
    joiner), whitespace runs as one space. `Écrits`, `écrits` and `e\u0301crits` share a
    key, as do `ＡＢＣ` and `abc`."""
    folded = unicodedata.normalize("NFD", name).casefold()
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", folded).casefold())
    visible = "".join(c for c in folded if unicodedata.category(c) != "Cf")
    return " ".join(unicodedata.normalize("NFKC", visible).split())


def _fill_key(_mapper: Any, _connection: Any, target: Any) -> None:
    target.name_key = name_key(target.name)


def keep_name_key(*models: type) -> None:
    """Fill `name_key` from `name` whenever the ORM writes one of these models, so no code
    path can store a name without its key."""
    for model in models:
        event.listen(model, "before_insert", _fill_key)
        event.listen(model, "before_update", _fill_key)


def violates(error: IntegrityError, *, constraint: str, columns: tuple[str, ...]) -> bool:
    """Whether `error` is the unique constraint `constraint` (over `table.column`s, which is
    how SQLite names it; PostgreSQL gives the constraint's name)."""
    diag = getattr(error.orig, "diag", None)
    if diag is not None and getattr(diag, "constraint_name", None):
        return diag.constraint_name == constraint
    return "UNIQUE constraint failed: " + ", ".join(columns) in str(error.orig)
