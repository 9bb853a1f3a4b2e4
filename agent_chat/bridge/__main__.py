"""``python -m agent_chat.bridge [--host 127.0.0.1] [--port 18731]``."""

from __future__ import annotations

import argparse
import logging

import uvicorn

from agent_chat.bridge.app import create_app
from agent_chat.bridge.console import NoHealthPolls, QuietHermes
from agent_chat.bridge.malloc import limit_arenas
from agent_chat.bridge.settings import load_bridge_settings
from agent_chat.common.hosts import LOOPBACK_HOSTS

OWN = ("agent_chat", "uvicorn", "__main__")  # loggers whose INFO lines stay


def token_refusal(host: str, token: str | None) -> str | None:
    """Why the bridge may not listen on `host`: without a token only loopback, where no
    other machine reaches it (anyone who reaches a bridge without one runs agents with the
    app's model keys, reads people's memory and allows commands)."""
    if token or host in LOOPBACK_HOSTS:
        return None
    return (
        f"the bridge would listen on {host} without a token: set AGENT_CHAT_BRIDGE_TOKEN "
        "(the same value for the app), or listen on 127.0.0.1"
    )


def main(argv: list[str] | None = None) -> None:
    limit_arenas()  # before any run thread: a long day must not step memory up per thread
    settings = load_bridge_settings()  # before hermes is imported (it loads $HERMES_HOME/.env)
    parser = argparse.ArgumentParser(
        description="Agent Chat bridge: HTTP + SSE around hermes-agent."
    )
    parser.add_argument("--host", default=settings.host)
    parser.add_argument("--port", type=int, default=settings.port)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(QuietHermes(OWN))
    refusal = token_refusal(args.host, settings.token)
    if refusal:
        raise SystemExit(refusal)
    logging.getLogger("uvicorn.access").addFilter(NoHealthPolls())
    app = create_app(settings)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level.lower())


if __name__ == "__main__":
    main()
