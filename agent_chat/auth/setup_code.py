"""The one-time setup code (as Jupyter's token): while no account exists, whoever reaches
`/setup` first becomes administrator, so an app that listens beyond loopback (or has a
public name configured) asks for a code printed in its log at start.

The code is made once when this module is first imported, i.e. before Reflex's web workers
are forked, so every worker of one start knows the same one (`AGENT_CHAT_SETUP_CODE` sets
it instead, e.g. for workers on several machines). It is compared in constant time, and
wrong codes count in the sign-in limit per address (`auth_sessions.failure_wait`).
`AGENT_CHAT_ADMIN_USER`/`_PASSWORD` make the administrator at start: no `/setup` at all.
"""

from __future__ import annotations

import hmac
import os
import secrets

from agent_chat.common.hosts import LOOPBACK_HOSTS

# No 0/O, 1/I/L, U: read from a log and typed by a person. 12 of 30: ~59 bits.
ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"
# The name wrong codes are counted under in `login_failure` (no username can be this).
FAILURE_NAME = "(setup code)"


def _new_code() -> str:
    raw = "".join(secrets.choice(ALPHABET) for _ in range(12))
    return "-".join(raw[i : i + 4] for i in range(0, 12, 4))


_CODE = (os.environ.get("AGENT_CHAT_SETUP_CODE") or "").strip() or _new_code()


def setup_code() -> str:
    return _CODE


def _normal(code: str) -> str:
    return "".join(code.upper().split()).replace("-", "")


def matches(given: str, expected: str) -> bool:
    """Whether `given` is the code (case, spaces and dashes aside), in constant time."""
    return hmac.compare_digest(_normal(given).encode(), _normal(expected).encode())


def code_for(app_host: str) -> str | None:
    """The code `/setup` asks for with the app on `app_host` and the public names of the
    environment (`AGENT_CHAT_ALLOWED_HOSTS`/`_ORIGINS`); None: it asks for none."""
    asks = required(
        app_host=app_host,
        allowed_hosts=os.environ.get("AGENT_CHAT_ALLOWED_HOSTS"),
        allowed_origins=os.environ.get("AGENT_CHAT_ALLOWED_ORIGINS"),
    )
    return _CODE if asks else None


def required(*, app_host: str, allowed_hosts: str | None, allowed_origins: str | None) -> bool:
    """Whether `/setup` asks for the code: the app listens beyond loopback, or a public name
    is configured (a proxy on this machine forwards strangers to a loopback app)."""
    public = (allowed_hosts or "").strip() or (allowed_origins or "").strip()
    return app_host not in LOOPBACK_HOSTS or bool(public)
