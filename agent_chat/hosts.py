"""Which `Host` and `Origin` a request may carry: the allow-lists of the app and the bridge.

Browsers let any web page open a websocket or send a request to 127.0.0.1, and DNS
rebinding makes a foreign name resolve to it: a request is ours only if its `Host` names
this machine (or a configured public name) and, when it comes from a page, its `Origin` is
the app's own. Plain Python, shared by the app (auth/origins.py) and the bridge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def host_name(host_header: str) -> str:
    """The name in a `Host` header, without port or IPv6 brackets, lower case."""
    value = host_header.strip().lower()
    if value.startswith("["):  # [::1]:3000
        return value[1 : value.find("]")] if "]" in value else ""
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _split(raw: str | None) -> list[str]:
    return [part.strip() for part in (raw or "").split(",") if part.strip()]


def normalize_origin(origin: str) -> str | None:
    """`scheme://host[:port]` in lower case with default ports dropped; None if not one."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    default = {"http": 80, "https": 443}[parts.scheme]
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


@dataclass(frozen=True)
class Allowed:
    """The allow-lists: host names (besides loopback) and extra page origins."""

    hosts: frozenset[str] = frozenset()
    origins: frozenset[str] = frozenset()

    @classmethod
    def from_lists(cls, hosts: Iterable[str] = (), origins: Iterable[str] = ()) -> Allowed:
        clean = {o for o in (normalize_origin(x) for x in origins) if o}
        names = {h.strip().lower() for h in hosts if h.strip()}
        # A configured public origin's host is a configured host too.
        names |= {host_name(urlsplit(o).netloc) for o in clean}
        return cls(frozenset(names), frozenset(clean))

    @classmethod
    def from_env(cls, hosts: str | None, origins: str | None) -> Allowed:
        """From the comma-separated `AGENT_CHAT_ALLOWED_HOSTS` / `..._ORIGINS` values."""
        for origin in _split(origins):
            if normalize_origin(origin) is None:
                raise ValueError(
                    f"AGENT_CHAT_ALLOWED_ORIGINS: {origin!r} is not an origin like "
                    "https://chat.example.com"
                )
        return cls.from_lists(_split(hosts), _split(origins))

    def host_ok(self, host_header: str | None) -> bool:
        if not host_header:
            return False
        name = host_name(host_header)
        if name in LOOPBACK_HOSTS or name in self.hosts or "*" in self.hosts:
            return True
        return any(h.startswith("*.") and name.endswith(h[1:]) for h in self.hosts)

    def origin_ok(self, origin: str, *, host_header: str, scheme: str) -> bool:
        """A page's `Origin` is allowed if it is the app's own (same scheme and host as the
        request) or a configured one."""
        normal = normalize_origin(origin)
        if normal is None:
            return False
        if normal in self.origins:
            return True
        page_scheme = "https" if scheme in ("https", "wss") else "http"
        return normal == normalize_origin(f"{page_scheme}://{host_header}")
