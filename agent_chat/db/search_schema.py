"""The full-text index's schema, which SQLModel does not describe (db/search.py reads it).

- SQLite: contentless FTS5 tables `chat_message_fts` (user messages and answers, rowid = the
  message id) and `chat_session_fts` (titles, rowid = the session id), kept current by
  triggers on `chat_message` and `chat_session` (insert, edit of the text, delete and the
  cascade of a deleted conversation). The triggers index `search_form(text)` through the SQL
  function `agent_chat_search_form`, which every connection of the app's engine registers
  (`register_sqlite_function`). Contentless: the index holds no second copy of the text.
- PostgreSQL: a generated `search_vector tsvector` column on both tables (PostgreSQL itself
  keeps it current) with a GIN index, from the SQL function of the same name. The messages'
  index has two columns (migration 9d5e7f1a3b6c): `search_vector` and the expression
  `agent_chat_search_prefixes(search_vector)`, each lexeme's first 2–6 characters without
  positions (`ca`, `cam`… `camera` of camera), so a typed prefix is one exact GIN lookup,
  intersected with the other words inside the one index scan (GIN answers `cam:*` by reading
  the matches of every word beginning so: 10–100 ms at 1,000,000 messages). An expression,
  not a column: the heap never holds the prefixes. A vector whose prefixes would not fit in
  a tsvector gets the lexeme `*` instead (db/search.py includes those rows and tests them).

- The names of attachments (migration e6a8c0d2f4b7), indexed apart from the messages that
  carry them: SQLite's contentless FTS5 table `attachment_fts` (rowid = the attachment id,
  triggers on `attachment`), PostgreSQL's generated `attachment.search_vector` with a GIN
  index. An attachment's name never changes once stored and a link is a row of
  `message_attachment`, which db/search.py joins when it asks: linking, unlinking or deleting
  a message needs no index work, so the index cannot miss a change made in any order.

A later SQLite batch migration that recreates `chat_message`, `chat_session` or `attachment`
drops their triggers with the old table: it must call `create_sqlite_triggers()` (or
`create_sqlite_attachment_triggers()`) again (the search tests run on the migrated schema and
would notice).
"""

from __future__ import annotations

from typing import Any

from agent_chat.db.search_text import (
    CJK_RANGES,
    INDEXED_CHARS,
    PREFIX_MAX,
    PREFIX_MIN,
    PREFIX_MISSING,
    SQL_FUNCTION,
    search_form,
)

SEARCHED_ROLES = "('USER', 'ASSISTANT')"
FTS_TABLES = ("chat_message_fts", "chat_session_fts")
# The GIN indexes as migration 38efa416bde2 made them; 9d5e7f1a3b6c replaces the first by
# PG_MESSAGE_INDEX.
PG_INDEXES = ("ix_chat_message_search_vector", "ix_chat_session_search_vector")
PG_MESSAGE_INDEX = "ix_chat_message_search_prefixes"
PREFIX_FUNCTION = "agent_chat_search_prefixes"
ATTACHMENT_FTS = "attachment_fts"
PG_ATTACHMENT_INDEX = "ix_attachment_search_vector"
TOKENIZER = "unicode61 remove_diacritics 0"  # accents kept, as PostgreSQL's 'simple'


def register_sqlite_function(dbapi_connection: Any, _record: Any = None) -> None:
    """Give a SQLite connection the function the index triggers call (a connect listener)."""
    dbapi_connection.create_function(SQL_FUNCTION, 1, search_form, deterministic=True)


def include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    """Alembic's filter: the search objects are this module's, not the models'."""
    if type_ == "table" and name and name.startswith((*FTS_TABLES, ATTACHMENT_FTS)):
        return False
    if type_ == "column" and name == "search_vector":
        return False
    return not (type_ == "index" and name in (*PG_INDEXES, PG_MESSAGE_INDEX, PG_ATTACHMENT_INDEX))


# ---- SQLite ---------------------------------------------------------------------------------


def _fts_ops(table: str, column: str, row: str, text: str, condition: str) -> tuple[str, str]:
    """(insert, delete) statements of one row's text, each applied only when `condition`."""
    indexed = f"{SQL_FUNCTION}({row}.{text})"
    insert = f"INSERT INTO {table}(rowid, {column}) SELECT {row}.id, {indexed} WHERE {condition};"
    delete = (
        f"INSERT INTO {table}({table}, rowid, {column}) "
        f"SELECT 'delete', {row}.id, {indexed} WHERE {condition};"
    )
    return insert, delete


def _sqlite_triggers() -> list[str]:
    statements = []
    for table, fts, column, text, extra in (
        (
            "chat_message",
            "chat_message_fts",
            "body",
            "content",
            " AND {r}.role IN " + SEARCHED_ROLES,
        ),
        ("chat_session", "chat_session_fts", "title", "title", ""),
    ):
        new_ok = f"new.{text} != ''" + extra.format(r="new")
        old_ok = f"old.{text} != ''" + extra.format(r="old")
        insert_new, _ = _fts_ops(fts, column, "new", text, new_ok)
        _, delete_old = _fts_ops(fts, column, "old", text, old_ok)
        changed = f"old.{text} IS NOT new.{text}" + (
            " OR old.role IS NOT new.role" if table == "chat_message" else ""
        )
        statements += [
            f"CREATE TRIGGER {fts}_insert AFTER INSERT ON {table} BEGIN {insert_new} END",
            f"CREATE TRIGGER {fts}_delete AFTER DELETE ON {table} BEGIN {delete_old} END",
            f"CREATE TRIGGER {fts}_update AFTER UPDATE ON {table} WHEN {changed} "
            f"BEGIN {delete_old} {insert_new} END",
        ]
    return statements


def create_sqlite_triggers(execute: Any) -> None:
    for fts in FTS_TABLES:
        for kind in ("insert", "delete", "update"):
            execute(f"DROP TRIGGER IF EXISTS {fts}_{kind}")
    for statement in _sqlite_triggers():
        execute(statement)


def create_sqlite(execute: Any) -> None:
    """Create the FTS5 tables, fill them from the existing rows, add the triggers."""
    execute(
        f"CREATE VIRTUAL TABLE chat_message_fts USING fts5(body, content='', tokenize='{TOKENIZER}')"
    )
    execute(
        f"CREATE VIRTUAL TABLE chat_session_fts USING fts5(title, content='', tokenize='{TOKENIZER}')"
    )
    execute(
        f"INSERT INTO chat_message_fts(rowid, body) SELECT id, {SQL_FUNCTION}(content) "
        f"FROM chat_message WHERE content != '' AND role IN {SEARCHED_ROLES}"
    )
    execute(
        f"INSERT INTO chat_session_fts(rowid, title) SELECT id, {SQL_FUNCTION}(title) "
        "FROM chat_session WHERE title != ''"
    )
    create_sqlite_triggers(execute)


def drop_sqlite(execute: Any) -> None:
    for fts in FTS_TABLES:
        for kind in ("insert", "delete", "update"):
            execute(f"DROP TRIGGER IF EXISTS {fts}_{kind}")
        execute(f"DROP TABLE IF EXISTS {fts}")


def _sqlite_attachment_triggers() -> list[str]:
    insert_new, _ = _fts_ops(ATTACHMENT_FTS, "name", "new", "name", "new.name != ''")
    _, delete_old = _fts_ops(ATTACHMENT_FTS, "name", "old", "name", "old.name != ''")
    return [
        f"CREATE TRIGGER {ATTACHMENT_FTS}_insert AFTER INSERT ON attachment BEGIN {insert_new} END",
        f"CREATE TRIGGER {ATTACHMENT_FTS}_delete AFTER DELETE ON attachment BEGIN {delete_old} END",
        # No code renames an attachment; should one, the index follows.
        f"CREATE TRIGGER {ATTACHMENT_FTS}_update AFTER UPDATE ON attachment "
        f"WHEN old.name IS NOT new.name BEGIN {delete_old} {insert_new} END",
    ]


def _drop_sqlite_attachment_triggers(execute: Any) -> None:
    for kind in ("insert", "delete", "update"):
        execute(f"DROP TRIGGER IF EXISTS {ATTACHMENT_FTS}_{kind}")


def create_sqlite_attachment_triggers(execute: Any) -> None:
    _drop_sqlite_attachment_triggers(execute)
    for statement in _sqlite_attachment_triggers():
        execute(statement)


def create_sqlite_attachments(execute: Any) -> None:
    """The attachments' names: the FTS5 table, filled from the existing rows, its triggers."""
    execute(
        f"CREATE VIRTUAL TABLE {ATTACHMENT_FTS} USING fts5(name, content='', "
        f"tokenize='{TOKENIZER}')"
    )
    execute(
        f"INSERT INTO {ATTACHMENT_FTS}(rowid, name) SELECT id, {SQL_FUNCTION}(name) "
        "FROM attachment WHERE name != ''"
    )
    create_sqlite_attachment_triggers(execute)


def drop_sqlite_attachments(execute: Any) -> None:
    _drop_sqlite_attachment_triggers(execute)
    execute(f"DROP TABLE IF EXISTS {ATTACHMENT_FTS}")


# ---- PostgreSQL -----------------------------------------------------------------------------

# What search_text.search_form makes a space: ASCII and common Unicode punctuation and symbols
# (PostgreSQL's regex classes depend on the locale; explicit ranges do not).
_PG_SEPARATORS = (
    r"[\u0001-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u00bf\u00d7\u00f7\u2000-\u2bff"
    r"\u2e00-\u2e7f\u3000-\u3004\u3008-\u3020\u3030\u303d\ufe10-\ufe1f\ufe30-\ufe4f"
    r"\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\U0001f000-\U0001faff]+"
)


def _pg_cjk_class() -> str:
    # The Python ranges, written as PostgreSQL regex escapes.
    out = []
    for char in CJK_RANGES:
        code = ord(char)
        out.append(
            "-" if char == "-" else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        )
    return "[" + "".join(out) + "]"


def create_postgresql(execute: Any) -> None:
    """The SQL function, the generated columns (computed for existing rows) and GIN indexes."""
    execute(
        f"CREATE OR REPLACE FUNCTION {SQL_FUNCTION}(text) RETURNS text "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT regexp_replace("
        f"regexp_replace(left($1, {INDEXED_CHARS}), '{_PG_SEPARATORS}', ' ', 'g'), "
        f"'({_pg_cjk_class()})', ' \\1 ', 'g') $$"
    )
    execute(
        "ALTER TABLE chat_message ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ("
        f"CASE WHEN role IN {SEARCHED_ROLES} "
        f"THEN to_tsvector('simple'::regconfig, {SQL_FUNCTION}(content)) END) STORED"
    )
    execute(
        "ALTER TABLE chat_session ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ("
        f"to_tsvector('simple'::regconfig, {SQL_FUNCTION}(title))) STORED"
    )
    execute("CREATE INDEX ix_chat_message_search_vector ON chat_message USING gin (search_vector)")
    execute("CREATE INDEX ix_chat_session_search_vector ON chat_session USING gin (search_vector)")


def drop_postgresql(execute: Any) -> None:
    for index in PG_INDEXES:
        execute(f"DROP INDEX IF EXISTS {index}")
    execute("ALTER TABLE chat_message DROP COLUMN IF EXISTS search_vector")
    execute("ALTER TABLE chat_session DROP COLUMN IF EXISTS search_vector")
    execute(f"DROP FUNCTION IF EXISTS {SQL_FUNCTION}(text)")


def create_postgresql_attachments(execute: Any) -> None:
    """The attachments' names: a generated vector (computed for existing rows) and its GIN
    index. A plain one-column index: names are short, so a prefix's lookup reads little."""
    execute(
        "ALTER TABLE attachment ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ("
        f"to_tsvector('simple'::regconfig, {SQL_FUNCTION}(name))) STORED"
    )
    execute(f"CREATE INDEX {PG_ATTACHMENT_INDEX} ON attachment USING gin (search_vector)")


def drop_postgresql_attachments(execute: Any) -> None:
    execute(f"DROP INDEX IF EXISTS {PG_ATTACHMENT_INDEX}")
    execute("ALTER TABLE attachment DROP COLUMN IF EXISTS search_vector")


# Every prefix of 2–6 characters of each lexeme of the vector $1, duplicates included.
_PREFIXES = (
    "SELECT left(w, n) FROM unnest(tsvector_to_array($1)) w, "
    f"generate_series({PREFIX_MIN}, least({PREFIX_MAX}, length(w))) n"
)
# A tsvector's lexemes take at most 1 MiB (array_to_tsvector does not check it). The prefixes
# of one lexeme take at most 4 × (2 + 3 + 4 + 5 + 6) = 80 bytes, so a vector of fewer than
# _SURELY_FITS lexemes (every ordinary text) takes them unchecked; a bigger one counts first.
_SURELY_FITS = 12_000
_MAX_BYTES = 1_000_000


def create_postgresql_prefixes(execute: Any, concurrently: bool = False) -> None:
    """The prefix function and the two-column GIN index of the messages (see the module doc),
    replacing the one-column index; then ANALYZE of existing rows, which gives the planner
    the expression's statistics. `concurrently`: without blocking writes, outside a transaction."""
    execute(
        f"CREATE OR REPLACE FUNCTION {PREFIX_FUNCTION}(tsvector) RETURNS tsvector "
        # PL/pgSQL keeps its plans for the session: a SQL function is planned again in every
        # statement, which made each inserted message ~1 ms dearer (an import of 2,000: +3 s).
        # Costly for the planner, so that it is computed by the index, not per row of a scan.
        # PARALLEL RESTRICTED (it is safe): with that cost counted for each row found, the
        # planner would share the lookup's heap scan of a few thousand rows with workers, whose
        # start costs more (EXPLAIN ANALYZE at 100k: 36-43 ms instead of 4-18).
        "LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL RESTRICTED COST 1000 AS $$ BEGIN "
        f"IF length($1) < {_SURELY_FITS} THEN RETURN array_to_tsvector(ARRAY({_PREFIXES})); "
        "END IF; RETURN (SELECT CASE WHEN coalesce(sum(octet_length(p)), 0) < "
        f"{_MAX_BYTES} THEN array_to_tsvector(coalesce(array_agg(p), '{{}}')) "
        f"ELSE array_to_tsvector(ARRAY['{PREFIX_MISSING}']) END "
        f"FROM (SELECT DISTINCT p FROM ({_PREFIXES}) a(p)) d); END $$"
    )
    how = "CONCURRENTLY " if concurrently else ""
    # A CONCURRENTLY build that failed leaves an invalid index behind: start again.
    execute(f"DROP INDEX {how}IF EXISTS {PG_MESSAGE_INDEX}")
    execute(
        f"CREATE INDEX {how}{PG_MESSAGE_INDEX} ON chat_message "
        f"USING gin (search_vector, {PREFIX_FUNCTION}(search_vector))"
    )
    execute(f"DROP INDEX {how}IF EXISTS {PG_INDEXES[0]}")
    # Not on an empty table (a new install): its statistics would then say "no rows", and a
    # connection's first plans of the foreign key checks (cached for its life: each log row
    # inserted would scan all messages) would read the table instead of its key (an import
    # of 2,000 messages took 15 s instead of 2).
    execute(
        "DO $$ BEGIN IF EXISTS (SELECT FROM chat_message) THEN ANALYZE chat_message; END IF; END $$"
    )


def drop_postgresql_prefixes(execute: Any, concurrently: bool = False) -> None:
    how = "CONCURRENTLY " if concurrently else ""
    execute(
        f"CREATE INDEX {how}IF NOT EXISTS {PG_INDEXES[0]} ON chat_message USING gin (search_vector)"
    )
    execute(f"DROP INDEX {how}IF EXISTS {PG_MESSAGE_INDEX}")
    execute(f"DROP FUNCTION IF EXISTS {PREFIX_FUNCTION}(tsvector)")
