"""`collect()` reads a whole export in a handful of queries, whatever its size."""

from __future__ import annotations

from sqlalchemy import Engine

from tests.support.conversations import recorded_statements
from tests.support.exports import build_conversation, read_export


def test_logs_of_all_messages_are_read_in_one_query(engine: Engine) -> None:
    conv = build_conversation(engine)
    with recorded_statements(engine) as statements:
        data = read_export(engine, conv, "all")
    log_queries = [s for s in statements if "FROM chat_message_log" in s]
    assert len(log_queries) == 1
    assert len(statements) <= 9  # the messages' files are one more
    assert sum(1 for s in statements if "FROM message_attachment" in s) == 1
    assert sum(len(rows) for rows in data.logs.values()) > 10
