"""Signed expiring session tokens, the secret file and the login settings
(agent_chat/auth/tokens.py, LoginConfig)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agent_chat.auth import (
    LoginConfig,
    derive_key,
    load_or_create_secret,
    sign_session,
    verify_session,
)
from agent_chat.config import load_settings
from tests.auth.conftest import HOUR, KEY


def test_a_signed_token_verifies_until_it_expires() -> None:
    token = sign_session(KEY, expires=1000)
    assert verify_session(KEY, token, now=999, max_age=HOUR)
    assert not verify_session(KEY, token, now=1000, max_age=HOUR)
    assert not verify_session(KEY, token, now=5000, max_age=HOUR)


def test_a_tampered_token_or_another_key_is_refused() -> None:
    token = sign_session(KEY, expires=1000)
    expires, _, signature = token.partition(".")
    assert not verify_session(KEY, f"2000.{signature}", now=999, max_age=HOUR)
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    assert not verify_session(KEY, f"{expires}.{flipped}", now=999, max_age=HOUR)
    assert not verify_session(derive_key("other", "hunter2"), token, now=999, max_age=HOUR)
    # A new password invalidates the sessions signed with the old one.
    assert not verify_session(derive_key("a-secret", "new"), token, now=999, max_age=HOUR)
    for junk in (None, "", ".", "abc", "1000", "1000.", "-5.x", "１０００." + signature, "x" * 500):
        assert not verify_session(KEY, junk, now=999, max_age=HOUR)


def test_a_token_living_longer_than_the_session_length_is_refused() -> None:
    """Lowering AGENT_CHAT_SESSION_HOURS shortens sessions already issued."""
    token = sign_session(KEY, expires=10 * 3600)
    assert verify_session(KEY, token, now=0, max_age=10 * 3600)
    assert not verify_session(KEY, token, now=0, max_age=HOUR)
    assert verify_session(KEY, token, now=9 * 3600 + 1, max_age=HOUR)


def test_the_secret_file_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secret_key"
    first = load_or_create_secret(path)
    assert len(first) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_secret(path) == first


def test_settings_read_password_secret_and_session_hours(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AGENT_CHAT_PASSWORD", "AGENT_CHAT_SECRET", "AGENT_CHAT_SESSION_HOURS"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert (settings.password, settings.secret, settings.session_hours) == (None, None, 12.0)
    assert LoginConfig.from_settings(settings) is None
    monkeypatch.setenv("AGENT_CHAT_PASSWORD", "pw")
    monkeypatch.setenv("AGENT_CHAT_SECRET", "s3")
    monkeypatch.setenv("AGENT_CHAT_SESSION_HOURS", "0.5")
    settings = load_settings()
    assert (settings.password, settings.secret, settings.session_hours) == ("pw", "s3", 0.5)
    config = LoginConfig.from_settings(settings)
    assert config is not None and config.session_seconds == 1800
    assert config.key == derive_key("s3", "pw")
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("AGENT_CHAT_SESSION_HOURS", bad)
        with pytest.raises(ValueError, match="AGENT_CHAT_SESSION_HOURS"):
            load_settings()


def test_without_a_secret_the_key_comes_from_the_secret_file(tmp_path: Path) -> None:
    settings = load_settings().__class__(
        **{**load_settings().__dict__, "password": "pw", "secret": None}
    )
    config = LoginConfig.from_settings(settings, data_dir=tmp_path)
    assert config is not None
    assert config.key == derive_key((tmp_path / "secret_key").read_text().strip(), "pw")
