"""Which `Host` and `Origin` a request may carry: the allow-lists of the app and the bridge.

Browsers let any web page open a websocket or send a request to 127.0.0.1, and DNS
rebinding makes a foreign name resolve to it: a request is ours only if its `Host` names
this machine (or a configured public name) and, when it comes from a page, its `Origin` is
the app's own. Plain Python, shared by the app (auth/origins.py) and the bridge.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


# A host name's labels (underscores too: container names have them), or an IPv4 address.
_NAME = re.compile(
    r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*"
)


def _port_ok(port: str) -> bool:
    return port.isascii() and port.isdigit() and len(port) <= 5 and int(port) <= 65535


def host_name(host_header: str) -> str:
    """The name in a `Host` header (`name[:port]`, `[IPv6][:port]`), without port or
    brackets, lower case; "" when the header is not exactly that: userinfo, a path, junk
    after the brackets (`[::1]evil.com`), a bare IPv6 address, a bad port, spaces inside."""
    value = host_header.strip().lower()
    if value.startswith("["):  # [::1]:3000
        end = value.find("]")
        inner, rest = value[1:end], value[end + 1 :]
        if end < 0 or (rest and not (rest[0] == ":" and _port_ok(rest[1:]))):
            return ""
        try:
            ipaddress.IPv6Address(inner)
        except ValueError:
            return ""
        return inner
    name, colon, port = value.partition(":")
    if colon and not _port_ok(port):
        return ""
    return name if _NAME.fullmatch(name) else ""


def _split(raw: str | None) -> list[str]:
    return [part.strip() for part in (raw or "").split(",") if part.strip()]


def normalize_origin(origin: str) -> str | None:
    """`scheme://host[:port]` in lower case with default ports dropped; None if not one."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:  # e.g. an unclosed IPv6 bracket, a port that is not a number
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or not host_name(parts.netloc):  # userinfo, junk
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
        if not name:  # not a valid host at all: not even a configured "*" takes it
            return False
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
