"""The bridge's console: the app's /health polls leave no access line, other requests do."""

from __future__ import annotations

import logging

from agent_chat.bridge.console import NoHealthPolls


def _access(path: str) -> logging.LogRecord:
    # uvicorn's access record: (client, method, path with query, http version, status)
    return logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", path, "1.1", 200),
        None,
    )


def test_health_polls_are_dropped_and_other_requests_kept() -> None:
    quiet = NoHealthPolls()
    assert not quiet.filter(_access("/health"))
    assert not quiet.filter(_access("/health?x=1"))
    assert quiet.filter(_access("/runs/abc/events"))
    assert quiet.filter(_access("/healthz"))
    plain = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, "no args", None, None)
    assert quiet.filter(plain)
