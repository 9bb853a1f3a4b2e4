"""Several web workers start at once (GRANIAN_WORKERS) on one database: the start-up's
database work (migrations, the first administrator, the model from the environment) goes
one process at a time (`db/engine.py:startup_lock`)."""

from __future__ import annotations

import threading
import time

from agent_chat.db.engine import startup_lock


def test_the_start_up_goes_one_at_a_time(db_url: str) -> None:
    order: list[str] = []

    def second() -> None:
        with startup_lock(db_url):
            order.append("second in")

    with startup_lock(db_url):
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.5)  # the second waits all this while
        order.append("first out")
    thread.join(10)
    assert order == ["first out", "second in"]
    with startup_lock(db_url):  # given back: free again
        pass
