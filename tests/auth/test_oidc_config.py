"""Single sign-on settings (config.py: AGENT_CHAT_OIDC_*): off unless the issuer, client id
and secret are all set, a partial or malformed configuration is a start-up error."""

from __future__ import annotations

import pytest

from agent_chat.config import OidcSettings, load_oidc_settings, load_settings

FULL = {
    "AGENT_CHAT_OIDC_ISSUER": "https://id.example.com/realms/main/",
    "AGENT_CHAT_OIDC_CLIENT_ID": "agent-chat",
    "AGENT_CHAT_OIDC_CLIENT_SECRET": "s3cret",
}
OPTIONAL = (
    "AGENT_CHAT_OIDC_NAME",
    "AGENT_CHAT_OIDC_SCOPES",
    "AGENT_CHAT_OIDC_ADMIN_CLAIM",
    "AGENT_CHAT_OIDC_ADMIN_VALUE",
    "AGENT_CHAT_OIDC_REDIRECT_URI",
)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*FULL, *OPTIONAL):
        monkeypatch.delenv(name, raising=False)


def _set(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def test_off_by_default() -> None:
    assert load_oidc_settings() is None
    assert load_settings().oidc is None


def test_the_three_required_variables_turn_it_on_with_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _set(monkeypatch, **FULL)
    assert load_settings().oidc == OidcSettings(
        issuer="https://id.example.com/realms/main",
        client_id="agent-chat",
        client_secret="s3cret",
        name="Single sign-on",
        scopes="openid profile email",
    )


@pytest.mark.parametrize("left_out", sorted(FULL))
def test_a_partial_configuration_is_a_start_up_error(
    monkeypatch: pytest.MonkeyPatch, left_out: str
) -> None:
    _set(monkeypatch, **{k: v for k, v in FULL.items() if k != left_out})
    with pytest.raises(ValueError, match=f"missing: {left_out}"):
        load_settings()


def test_the_optional_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    _set(
        monkeypatch,
        **FULL,
        AGENT_CHAT_OIDC_NAME="  Company   login ",
        AGENT_CHAT_OIDC_SCOPES="openid  email groups",
        AGENT_CHAT_OIDC_ADMIN_CLAIM="groups",
        AGENT_CHAT_OIDC_ADMIN_VALUE="agent-chat-admins",
        AGENT_CHAT_OIDC_REDIRECT_URI="https://chat.example.com/auth/oidc/callback",
    )
    oidc = load_oidc_settings()
    assert oidc is not None
    assert (oidc.name, oidc.scopes) == ("Company login", "openid email groups")
    assert (oidc.admin_claim, oidc.admin_value) == ("groups", "agent-chat-admins")
    assert oidc.redirect_uri == "https://chat.example.com/auth/oidc/callback"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"AGENT_CHAT_OIDC_ISSUER": "http://id.example.com"}, "must use https"),
        ({"AGENT_CHAT_OIDC_ISSUER": "id.example.com"}, "must be an https URL"),
        ({"AGENT_CHAT_OIDC_SCOPES": "profile email"}, "must include openid"),
        ({"AGENT_CHAT_OIDC_ADMIN_VALUE": "admins"}, "needs AGENT_CHAT_OIDC_ADMIN_CLAIM"),
        ({"AGENT_CHAT_OIDC_REDIRECT_URI": "ftp://x/cb"}, "REDIRECT_URI must be an https URL"),
    ],
)
def test_malformed_settings_are_refused(
    monkeypatch: pytest.MonkeyPatch, extra: dict[str, str], message: str
) -> None:
    _set(monkeypatch, **{**FULL, **extra})
    with pytest.raises(ValueError, match=message):
        load_oidc_settings()


def test_plain_http_is_allowed_on_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    _set(monkeypatch, **{**FULL, "AGENT_CHAT_OIDC_ISSUER": "http://127.0.0.1:9400"})
    oidc = load_oidc_settings()
    assert oidc is not None and oidc.issuer == "http://127.0.0.1:9400"
