"""Session tokens: `<expiry>.<signature>`, HMAC-SHA256 over the expiry.

The key is derived from the secret (`AGENT_CHAT_SECRET`, else a file made once with mode 0600)
and the password, so changing either logs everyone out. Tokens are stateless: nothing is
stored server-side, so a copied token stays valid until it expires.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
from pathlib import Path

log = logging.getLogger(__name__)

SECRET_FILE_NAME = "secret_key"
# Longer than any token we sign: refuse junk before hashing it.
MAX_TOKEN_LENGTH = 200


def load_or_create_secret(path: Path) -> str:
    """The secret stored at `path`, made (random, mode 0600) the first time."""
    try:
        secret = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        secret = ""
    if secret:
        return secret
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        # Another process made it between our read and our create: use theirs.
        return load_or_create_secret(path)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secret + "\n")
    log.info("Generated the session secret in %s", path)
    return secret


def derive_key(secret: str, password: str) -> bytes:
    """The signing key: a new secret or a new password invalidates every session."""
    return hmac.new(
        secret.encode(), b"agent-chat-session\0" + password.encode(), hashlib.sha256
    ).digest()


def _signature(key: bytes, expires: int) -> str:
    digest = hmac.new(key, f"session:{expires}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def sign_session(key: bytes, *, expires: int) -> str:
    """A session token valid until `expires` (Unix seconds)."""
    return f"{expires}.{_signature(key, expires)}"


def session_expiry(key: bytes, token: str | None, *, now: float, max_age: float) -> int | None:
    """When a valid session ends: None for a tampered or expired token, or one that would
    live more than `max_age` from now (so lowering the session length shortens old ones)."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    expires_text, dot, signature = token.partition(".")
    # isascii: str.isdigit accepts other scripts' digits ("１０００"), which int() would parse.
    if not dot or not expires_text.isascii() or not expires_text.isdigit():
        return None
    expires = int(expires_text)
    if not hmac.compare_digest(signature.encode(), _signature(key, expires).encode()):
        return None
    return expires if now < expires <= now + max_age else None


def verify_session(key: bytes, token: str | None, *, now: float, max_age: float) -> bool:
    return session_expiry(key, token, now=now, max_age=max_age) is not None
