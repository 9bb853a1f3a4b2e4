"""What the bridge's console shows: the bridge's own lines, not hermes' INFO chatter (several
lines per model call; it still reaches $HERMES_HOME/logs/agent.log through hermes' handler),
nor an access line per /health poll. Used by `python -m agent_chat.bridge` and by the bridge
embedded in the web app (agent_chat/runs/embedded.py), each with its own loggers."""

from __future__ import annotations

import logging


class QuietHermes(logging.Filter):
    """Warnings and worse from anyone; INFO only from loggers named with one of `own`."""

    def __init__(self, own: tuple[str, ...]) -> None:
        super().__init__()
        self.own = own

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or record.name.startswith(self.own)


class NoHealthPolls(logging.Filter):
    """The app polls /health every few seconds (runs/bridge_watch.py): one access line each
    would bury every line worth reading. Other requests are still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        path = args[2] if isinstance(args, tuple) and len(args) > 2 else ""
        return not (isinstance(path, str) and path.split("?", 1)[0] == "/health")
