"""A real OpenID provider for tests: `oidc-provider-mock` (PyPI) as a process of its own.

It serves discovery, an authorize page (a form: type a subject, or Deny), the token endpoint,
userinfo and its keys, and accepts any client id, secret and redirect URI. It takes its issuer
from each request's Host header, so everything here (and the app's setting) uses
`http://127.0.0.1:<port>`. `PUT /users/<sub>` sets a subject's claims; they go into its ID
token as they are, standard ones (`iss`, `aud`, `exp`, `nonce` ...) included, which is how the
tests get a real, signed token that is wrong in one way.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support.processes import free_port, start_process, stop_process


@dataclass(frozen=True)
class Provider:
    port: int

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_claims(self, sub: str, **claims: Any) -> None:
        """The claims of subject `sub` (a first sign-in as `sub` makes it otherwise, with
        only `email: sub`)."""
        reply = httpx.put(f"{self.issuer}/users/{sub}", json=claims, timeout=10)
        assert reply.status_code == 204, reply.text


@contextlib.contextmanager
def running_provider(tmp: Path) -> Iterator[Provider]:
    port = free_port()
    provider = Provider(port)
    process = start_process(
        [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)],
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        log=tmp / "oidc-provider.log",
        health=f"{provider.issuer}/.well-known/openid-configuration",
        timeout=60,
    )
    try:
        yield provider
    finally:
        stop_process(process)
