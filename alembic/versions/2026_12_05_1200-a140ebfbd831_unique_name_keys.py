"""Unique names by a key computed in Python: `chat_folder.name_key` and
`model_config.name_key` hold `names.name_key(name)` (Unicode NFKC and case folding), and
the unique constraints are on (owner_id, name_key) and (name_key) instead of the names, so
`Écrits`, `écrits`, `e\u0301crits` are one folder name on SQLite as on PostgreSQL.

Rows whose names now share a key (e.g. `Écrits` beside `écrits`, which SQLite's ASCII-only
`lower()` let in): the oldest (lowest id) keeps its name, each later one is renamed with
the first free suffix " (2)", " (3)", ... (a folder's name cut to stay within 60
characters), and every rename is logged as a warning. Nothing is deleted: conversations
stay in their (renamed) folders, models keep their ids.

`app_user.username` needs no key column: usernames were always stored as their key (ASCII
letters, digits and `._-`, lower-cased), so its unique constraint is the key's already.

Revision ID: a140ebfbd831
Revises: 9d5e7f1a3b6c
Create Date: 2026-12-05 12:00:00.000000+00:00

"""

import logging
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

from agent_chat.db.names import name_key

# revision identifiers, used by Alembic.
revision: str = "a140ebfbd831"
down_revision: str | Sequence[str] | None = "9d5e7f1a3b6c"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("agent_chat.migrations")

FOLDER_NAME_MAX_CHARS = 60  # db/folders.py's, as of this migration


def _free_name(name: str, taken: set[str], max_chars: int | None) -> str:
    """`name` with the first suffix " (n)" whose key is in no other row of the scope."""
    number = 2
    while True:
        suffix = f" ({number})"
        base = name if max_chars is None else name[: max_chars - len(suffix)].rstrip()
        candidate = base + suffix
        if name_key(candidate) not in taken:
            return candidate
        number += 1


def _fill_keys(table: str, scope: str | None, max_chars: int | None) -> None:
    """Fill `table.name_key`, renaming later rows whose key an older one of the same `scope`
    (the owner; None: the whole table) has."""
    bind = op.get_bind()
    owner = scope or "NULL"
    rows = bind.execute(sa.text(f"SELECT id, {owner}, name FROM {table} ORDER BY id")).all()
    # Every original key is reserved, so a rename never takes a later row's own name.
    taken: dict[object, set[str]] = {}
    for _, group, name in rows:
        taken.setdefault(group, set()).add(name_key(name))
    kept: dict[object, set[str]] = {}
    renamed = 0
    for row_id, group, name in rows:
        key = name_key(name)
        if key in kept.setdefault(group, set()):
            new_name = _free_name(name, taken[group], max_chars)
            where = f"{scope}={group}" if scope else "the table"
            log.warning(
                "%s %s: %r has the name key of an older row (%s): renamed %r",
                table, row_id, name, where, new_name,
            )  # fmt: skip
            name, key = new_name, name_key(new_name)
            taken[group].add(key)
            renamed += 1
        kept[group].add(key)
        bind.execute(
            sa.text(f"UPDATE {table} SET name = :name, name_key = :key WHERE id = :id"),
            {"name": name, "key": key, "id": row_id},
        )
    log.info("%s: name keys filled for %d rows, %d renamed", table, len(rows), renamed)


def upgrade() -> None:
    # A plain ADD COLUMN first (filled below), NOT NULL once every row has its key.
    for table in ("chat_folder", "model_config"):
        op.add_column(
            table, sa.Column("name_key", sqlmodel.sql.sqltypes.AutoString(), nullable=True)
        )
    _fill_keys("chat_folder", "owner_id", FOLDER_NAME_MAX_CHARS)
    _fill_keys("model_config", None, None)
    # On SQLite these batches recreate the two tables; neither has search triggers.
    with op.batch_alter_table("chat_folder") as batch:
        batch.alter_column("name_key", existing_type=sa.String(), nullable=False)
        batch.drop_constraint("uq_chat_folder_owner_id_name", type_="unique")
        batch.create_unique_constraint(
            "uq_chat_folder_owner_id_name_key", ["owner_id", "name_key"]
        )
    with op.batch_alter_table("model_config") as batch:
        batch.alter_column("name_key", existing_type=sa.String(), nullable=False)
        batch.drop_constraint("uq_model_config_name", type_="unique")
        batch.create_unique_constraint("uq_model_config_name_key", ["name_key"])


def downgrade() -> None:
    # Names unique by key are unique as written too: the old constraints hold again.
    with op.batch_alter_table("model_config") as batch:
        batch.drop_constraint("uq_model_config_name_key", type_="unique")
        batch.create_unique_constraint("uq_model_config_name", ["name"])
        batch.drop_column("name_key")
    with op.batch_alter_table("chat_folder") as batch:
        batch.drop_constraint("uq_chat_folder_owner_id_name_key", type_="unique")
        batch.create_unique_constraint("uq_chat_folder_owner_id_name", ["owner_id", "name"])
        batch.drop_column("name_key")
