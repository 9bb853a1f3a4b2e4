"""The ID token's claims, checked one by one (agent_chat/auth/oidc_client.py), and what the
configured admin claim makes of a person's claims."""

from __future__ import annotations

import pytest

from agent_chat.auth.oidc_client import Rejected, is_admin, validate_id_token_claims

NOW = 1_800_000_000
ISSUER = "https://id.example.com"
GOOD = {
    "iss": ISSUER,
    "sub": "person-1",
    "aud": "agent-chat",
    "exp": NOW + 300,
    "iat": NOW - 5,
    "nonce": "the-nonce",
}


def _check(**changes: object) -> None:
    claims = {**GOOD, **changes}
    claims = {k: v for k, v in claims.items() if v is not None}
    validate_id_token_claims(
        claims, issuer=ISSUER, client_id="agent-chat", nonce="the-nonce", now=NOW
    )


def test_a_good_token_passes() -> None:
    _check()
    _check(aud=["agent-chat"])
    _check(aud=["agent-chat", "other"], azp="agent-chat")
    _check(exp=NOW - 30)  # within the leeway for clock skew


@pytest.mark.parametrize(
    "changes",
    [
        {"aud": "other", "azp": "agent-chat"},
        {"aud": ["other"]},
        {"aud": ["agent-chat", "other"]},
        {"azp": "other"},
        {"aud": None},
        {"iss": "https://id.example.com/"},
        {"iss": "https://evil.example"},
        {"iss": None},
        {"exp": NOW - 120},
        {"exp": None},
        {"exp": "tomorrow"},
        {"iat": None},
        {"iat": NOW + 3600},
        {"nonce": "another"},
        {"nonce": None},
        {"sub": None},
        {"sub": ""},
    ],
)
def test_each_wrong_claim_is_refused(changes: dict) -> None:
    with pytest.raises(Rejected):
        _check(**changes)


@pytest.mark.parametrize(
    ("claims", "claim", "value", "expected"),
    [
        ({"groups": ["a", "admins"]}, "groups", "admins", True),
        ({"groups": ["a"]}, "groups", "admins", False),
        ({}, "groups", "admins", False),
        ({"role": "admins"}, "role", "admins", True),
        ({"role": "admins-not"}, "role", "admins", False),
        ({"is_admin": True}, "is_admin", None, True),
        ({"is_admin": "true"}, "is_admin", None, True),
        ({"is_admin": False}, "is_admin", None, False),
        ({"is_admin": 1}, "is_admin", None, False),
        ({"groups": ["admins"]}, None, None, None),
    ],
)
def test_the_admin_claim(claims: dict, claim: str | None, value: str | None, expected) -> None:
    assert is_admin(claims, claim, value) is expected
