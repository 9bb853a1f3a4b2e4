"""Password hashes: argon2id through pwdlib, at OWASP's recommended minimum (19 MiB of
memory, 2 passes, 1 lane): about 0.2 s per sign-in here instead of 1.2 s at pwdlib's defaults
(`python -m benchmarks.password_hashing`). A hash made with other parameters (pwdlib's
defaults, before) is re-made with these at its next successful sign-in (`verify`, through
pwdlib's `verify_and_update`; `users.check_login` stores it).

People's passwords are low-entropy secrets, so unlike API tokens and session tokens (random,
a plain SHA-256 is enough) they get a slow, salted hash. `verify` also runs for a username
that does not exist (against a fixed dummy hash), so timing does not tell which names exist.
"""

from __future__ import annotations

from functools import cache

from pwdlib import PasswordHash
from pwdlib.exceptions import UnknownHashError
from pwdlib.hashers.argon2 import Argon2Hasher

MIN_PASSWORD_CHARS = 8
MAX_PASSWORD_CHARS = 1024  # argon2 takes any length; a megabyte "password" is a DoS, not a secret
# OWASP Password Storage Cheat Sheet, argon2id: m=19 MiB, t=2, p=1.
MEMORY_KIB, TIME_COST, PARALLELISM = 19 * 1024, 2, 1


def argon2id() -> Argon2Hasher:
    return Argon2Hasher(time_cost=TIME_COST, memory_cost=MEMORY_KIB, parallelism=PARALLELISM)


@cache
def _hasher() -> PasswordHash:
    return PasswordHash((argon2id(),))


@cache
def _dummy_hash() -> str:
    return _hasher().hash("agent-chat: no such user")


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def verify(password: str, password_hash: str | None) -> tuple[bool, str | None]:
    """Whether `password` matches `password_hash` (None: an unknown user, checked against a
    dummy so it costs the same) and, when it matches with outdated parameters, a new hash."""
    if password_hash is None:
        _hasher().verify(password, _dummy_hash())
        return False, None
    try:
        return _hasher().verify_and_update(password, password_hash)
    except UnknownHashError:
        _hasher().verify(password, _dummy_hash())
        return False, None


def password_problem(password: str) -> str | None:
    """Why `password` cannot be used, or None."""
    if len(password) < MIN_PASSWORD_CHARS:
        return f"Use at least {MIN_PASSWORD_CHARS} characters."
    if len(password) > MAX_PASSWORD_CHARS:
        return f"Use at most {MAX_PASSWORD_CHARS} characters."
    return None
