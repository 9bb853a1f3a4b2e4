"""Single sign-on through the gate (agent_chat/auth/oidc_routes.py, oidc_client.py) against a
real OpenID provider process (tests/support/oidc_provider.py): the redirect with state, nonce
and PKCE, the browser-bound single-use attempt, a first sign-in making a member and a second
finding it, the admin claim, and every refusal coming back to the login page with its message:
cancelled, bad or replayed state, another browser, an expired attempt, a token for another
audience or issuer, a wrong nonce, an expired token, a disabled user, an unreachable issuer."""

from __future__ import annotations

import base64
import hashlib
import re
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from agent_chat.auth import COOKIE_NAME, GateConfig
from agent_chat.auth.oidc_client import TIMEOUT_SECONDS, OidcClient
from agent_chat.auth.oidc_routes import ATTEMPT_COOKIE
from agent_chat.config import OidcSettings
from agent_chat.db import oidc, users
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import free_port
from tests.support.gate import HOUR, Clock, client_for, gated
from tests.support.oidc_provider import Provider, running_provider

CLIENT_ID = "agent-chat"
ADMIN_GROUP = "agent-chat-admins"


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    with running_provider(tmp_path_factory.mktemp("oidc")) as provider:
        yield provider


def _settings(issuer: str) -> OidcSettings:
    return OidcSettings(
        issuer=issuer,
        client_id=CLIENT_ID,
        client_secret="the client secret",
        name="Example ID",
        admin_claim="groups",
        admin_value=ADMIN_GROUP,
    )


@pytest.fixture
def clock() -> Clock:
    return Clock(time.time())  # the provider's tokens carry the real time


@pytest.fixture
async def client(
    storage: Storage, clock: Clock, alice, provider: Provider
) -> AsyncIterator[httpx.AsyncClient]:
    config = GateConfig(session_seconds=12 * HOUR, oidc=_settings(provider.issuer))
    async with client_for(gated(storage, clock, config)) as client:
        yield client


async def _start(client: httpx.AsyncClient, next_path: str = "") -> str:
    """`GET /auth/oidc/login`: the provider's authorize URL."""
    query = f"?{urlencode({'next': next_path})}" if next_path else ""
    response = await client.get(f"/auth/oidc/login{query}")
    assert response.status_code == 303, response.text
    return response.headers["location"]


def _authorize(authorize_url: str, sub: str | None = None) -> str:
    """The person at the provider: signs in as `sub`, or denies (None). The callback URL."""
    form = {"sub": sub} if sub else {"action": "deny"}
    reply = httpx.post(authorize_url, data=form, timeout=10)
    assert reply.status_code == 302, reply.text
    return reply.headers["location"]


def _callback_path(url: str) -> str:
    parts = urlsplit(url)
    assert parts.path == "/auth/oidc/callback"
    return f"{parts.path}?{parts.query}"


async def _sign_in(client: httpx.AsyncClient, sub: str, next_path: str = "") -> httpx.Response:
    callback = _authorize(await _start(client, next_path), sub)
    return await client.get(_callback_path(callback))


async def _login_error(client: httpx.AsyncClient, response: httpx.Response) -> str:
    """Where a refusal lands: the login page, with the message in `login-error`."""
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith("/login?sso_error=")
    assert COOKIE_NAME not in response.cookies
    page = await client.get(location)
    found = re.search(r'data-testid="login-error">([^<]*)</p>', page.text)
    assert found is not None
    return found.group(1)


async def _signed_in_as(client: httpx.AsyncClient) -> bool:
    return (await client.get("/", follow_redirects=False)).status_code == 200


async def test_the_login_page_offers_the_button_and_it_keeps_next(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/login?next=/chat/abc")
    assert 'data-testid="login-oidc"' in page.text
    assert "Sign in with Example ID" in page.text
    assert 'href="/auth/oidc/login?next=%2Fchat%2Fabc"' in page.text
    assert page.text.index("login-oidc") < page.text.index('data-testid="login-username"')


async def test_without_the_settings_there_is_no_button_and_no_route(
    storage: Storage, clock: Clock, alice
) -> None:
    async with client_for(gated(storage, clock)) as plain:
        assert "login-oidc" not in (await plain.get("/login")).text
        for path in ("/auth/oidc/login", "/auth/oidc/callback?code=x&state=y"):
            assert (await plain.get(path)).status_code == 404
        # An error code in the URL says nothing when single sign-on is off.
        page = await plain.get("/login?sso_error=denied")
        assert 'data-testid="login-error"></p>' in page.text


async def test_before_the_first_administrator_it_leads_to_setup(
    storage: Storage, clock: Clock, provider: Provider
) -> None:
    config = GateConfig(session_seconds=HOUR, oidc=_settings(provider.issuer))
    async with client_for(gated(storage, clock, config)) as client:  # no user yet
        response = await client.get("/auth/oidc/login")
        assert response.status_code == 303 and response.headers["location"] == "/setup"
        assert storage.call_sync(oidc.count_attempts) == 0


async def test_the_start_sends_state_nonce_and_pkce_and_binds_the_browser(
    client: httpx.AsyncClient, storage: Storage, provider: Provider
) -> None:
    response = await client.get("/auth/oidc/login")
    url = urlsplit(response.headers["location"])
    assert f"{url.scheme}://{url.netloc}" == provider.issuer
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert query["response_type"] == "code" and query["client_id"] == CLIENT_ID
    assert query["redirect_uri"] == "http://testserver/auth/oidc/callback"
    assert query["scope"] == "openid profile email"
    assert query["code_challenge_method"] == "S256"
    assert len(query["state"]) >= 40 and len(query["nonce"]) >= 40
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{ATTEMPT_COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Path=/auth/oidc/" in cookie and "Max-Age=600" in cookie
    # The verifier stays on the server; the URL has only its S256 challenge.
    attempt = storage.call_sync(oidc.take_attempt, token=client.cookies[ATTEMPT_COOKIE], now=_utc())
    assert attempt is not None and attempt.state == query["state"]
    assert attempt.nonce == query["nonce"]
    digest = hashlib.sha256(attempt.code_verifier.encode()).digest()
    assert query["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert attempt.code_verifier not in response.headers["location"]


def _utc():
    from agent_chat.db.models import utcnow

    return utcnow()


async def test_a_first_sign_in_makes_a_member_and_the_second_finds_it(
    client: httpx.AsyncClient, storage: Storage, provider: Provider
) -> None:
    provider.set_claims(
        "grace-sub", preferred_username="Grace", name="Grace Hopper", email="g@example.com"
    )
    before = storage.call_sync(users.count_users)
    response = await _sign_in(client, "grace-sub", next_path="/chat/abc")
    assert response.status_code == 303 and response.headers["location"] == "/chat/abc"
    session_cookie = response.headers["set-cookie"]
    assert "HttpOnly" in session_cookie and "SameSite=lax" in session_cookie
    assert await _signed_in_as(client)
    grace = storage.call_sync(users.find_user, username="grace")
    assert grace is not None and grace.display_name == "Grace Hopper"
    assert grace.role == "member" and grace.password_hash is None
    # The password form cannot sign this account in.
    refused = await client.post("/api/login", json={"username": "grace", "password": ""})
    assert refused.status_code == 401
    # Signed out and in again: the same account, no second one.
    await client.post("/api/logout")
    assert not await _signed_in_as(client)
    again = await _sign_in(client, "grace-sub")
    assert again.headers["location"] == "/"
    assert await _signed_in_as(client)
    assert storage.call_sync(users.count_users) == before + 1


async def test_an_existing_password_account_is_not_taken_over(
    client: httpx.AsyncClient, storage: Storage, provider: Provider
) -> None:
    provider.set_claims("not-alice", preferred_username="alice", email="alice@example.com")
    response = await _sign_in(client, "not-alice")
    assert response.status_code == 303
    made = storage.call_sync(users.find_user, username="alice-2")
    assert made is not None and made.role == "member"
    alice = storage.call_sync(users.find_user, username="alice")
    assert storage.call_sync(oidc.list_identities, user_id=alice.id) == []


async def test_the_admin_claim_promotes_and_demotes(
    client: httpx.AsyncClient, storage: Storage, provider: Provider
) -> None:
    provider.set_claims("boss", preferred_username="boss", groups=["staff", ADMIN_GROUP])
    await _sign_in(client, "boss")
    assert storage.call_sync(users.find_user, username="boss").role == "admin"
    provider.set_claims("boss", preferred_username="boss", groups=["staff"])
    await _sign_in(client, "boss")
    assert storage.call_sync(users.find_user, username="boss").role == "member"


async def test_a_cancelled_sign_in_says_so(client: httpx.AsyncClient) -> None:
    callback = _authorize(await _start(client), None)
    assert "error=access_denied" in callback
    response = await client.get(_callback_path(callback))
    assert await _login_error(client, response) == "Sign-in with Example ID was cancelled."
    # Shown under the button, not as a password error.
    page = (await client.get(response.headers["location"])).text
    assert page.index("login-oidc") < page.index("login-error") < page.index("<form")
    assert 'aria-invalid="true"' not in page


async def test_a_replayed_callback_is_refused(
    client: httpx.AsyncClient, provider: Provider
) -> None:
    provider.set_claims("replay", preferred_username="replay")
    callback = _callback_path(_authorize(await _start(client), "replay"))
    attempt_cookie = client.cookies[ATTEMPT_COOKIE]
    assert (await client.get(callback)).headers["location"] == "/"
    await client.post("/api/logout")
    client.cookies.set(ATTEMPT_COOKIE, attempt_cookie, path="/auth/oidc/")
    replayed = await client.get(callback)
    assert "expired or was already used" in await _login_error(client, replayed)
    assert not await _signed_in_as(client)


async def test_a_used_code_is_refused_by_the_provider(
    client: httpx.AsyncClient, provider: Provider
) -> None:
    provider.set_claims("twice", preferred_username="twice")
    first = _callback_path(_authorize(await _start(client), "twice"))
    assert (await client.get(first)).headers["location"] == "/"
    await client.post("/api/logout")
    # A new attempt of this browser, carrying the old code: the provider refuses it.
    state = parse_qs(urlsplit(await _start(client)).query)["state"][0]
    code = parse_qs(urlsplit(first).query)["code"][0]
    response = await client.get(f"/auth/oidc/callback?{urlencode({'code': code, 'state': state})}")
    assert "could not be verified" in await _login_error(client, response)
    assert not await _signed_in_as(client)


async def test_a_bad_state_is_refused_and_ends_the_attempt(
    client: httpx.AsyncClient, storage: Storage
) -> None:
    callback = _callback_path(_authorize(await _start(client), "stateful"))
    query = parse_qs(urlsplit(callback).query)
    forged = f"/auth/oidc/callback?code={query['code'][0]}&state=forged-state"
    assert "did not start in this browser" in await _login_error(client, await client.get(forged))
    # The attempt is gone: the right state afterwards does not work either.
    assert "expired" in await _login_error(client, await client.get(callback))
    assert storage.call_sync(users.find_user, username="stateful") is None


async def test_a_callback_in_another_browser_is_refused(
    client: httpx.AsyncClient, storage: Storage, clock: Clock, provider: Provider
) -> None:
    callback = _callback_path(_authorize(await _start(client), "elsewhere"))
    config = GateConfig(session_seconds=12 * HOUR, oidc=_settings(provider.issuer))
    async with client_for(gated(storage, clock, config)) as other_browser:
        response = await other_browser.get(callback)
        assert "expired" in await _login_error(other_browser, response)


async def test_an_expired_attempt_is_refused(client: httpx.AsyncClient, clock: Clock) -> None:
    authorize_url = await _start(client)
    clock.now += oidc.ATTEMPT_LIFETIME.total_seconds() + 1
    response = await client.get(_callback_path(_authorize(authorize_url, "slowpoke")))
    assert "expired" in await _login_error(client, response)


@pytest.mark.parametrize(
    "claims",
    [
        # Authlib 1.9.10's parse_id_token lets this one through (its azp is ours).
        {"aud": "another-client", "azp": CLIENT_ID},
        {"aud": ["another-client", CLIENT_ID]},  # several audiences and no azp
        {"aud": [CLIENT_ID, "another-client"], "azp": "another-client"},
        {"iss": "http://evil.example"},
        {"exp": int(time.time()) - 3600},
        {"iat": int(time.time()) + 3600},
        {"nonce": "a nonce from another attempt"},
    ],
    ids=["aud", "aud-list-no-azp", "azp", "iss", "expired", "iat-future", "nonce"],
)
async def test_a_token_wrong_in_one_claim_is_refused(
    client: httpx.AsyncClient, storage: Storage, provider: Provider, claims: dict
) -> None:
    sub = f"wrong-{len(claims)}-{next(iter(claims))}-{time.monotonic_ns()}"
    provider.set_claims(sub, preferred_username="mallory", **claims)
    response = await _sign_in(client, sub)
    assert "could not be verified" in await _login_error(client, response)
    assert storage.call_sync(users.find_user, username="mallory") is None
    assert not await _signed_in_as(client)


async def test_a_nonce_changed_on_the_way_is_refused(
    client: httpx.AsyncClient, storage: Storage, provider: Provider
) -> None:
    provider.set_claims("nonce-swap", preferred_username="nonce-swap")
    url = urlsplit(await _start(client))
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    query["nonce"] = "the attacker's nonce"
    callback = _authorize(url._replace(query=urlencode(query)).geturl(), "nonce-swap")
    response = await client.get(_callback_path(callback))
    assert "could not be verified" in await _login_error(client, response)
    assert storage.call_sync(users.find_user, username="nonce-swap") is None


async def test_a_disabled_user_is_refused(
    client: httpx.AsyncClient, storage: Storage, provider: Provider
) -> None:
    provider.set_claims("dee", preferred_username="dee")
    await _sign_in(client, "dee")
    await client.post("/api/logout")
    dee = storage.call_sync(users.find_user, username="dee")
    storage.call_sync(users.set_disabled, user_id=dee.id, disabled=True)
    response = await _sign_in(client, "dee")
    assert await _login_error(client, response) == "This account is disabled. Ask an administrator."
    assert not await _signed_in_as(client)


async def test_an_unreachable_issuer_shows_a_clear_error(
    storage: Storage, clock: Clock, alice
) -> None:
    config = GateConfig(session_seconds=HOUR, oidc=_settings(f"http://127.0.0.1:{free_port()}"))
    async with client_for(gated(storage, clock, config)) as client:
        started = time.monotonic()
        response = await client.get("/auth/oidc/login?next=/chat/q")
        assert time.monotonic() - started < 10
        assert response.headers["location"] == "/login?sso_error=unreachable&next=%2Fchat%2Fq"
        message = await _login_error(client, response)
        assert message == (
            "Example ID cannot be reached right now. Try again later, or sign in with a password."
        )
        assert ATTEMPT_COOKIE not in client.cookies
        assert storage.call_sync(oidc.count_attempts) == 0


async def test_an_issuer_that_never_answers_times_out(
    storage: Storage, clock: Clock, alice
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        port = silent.getsockname()[1]
        config = GateConfig(session_seconds=HOUR, oidc=_settings(f"http://127.0.0.1:{port}"))
        async with client_for(gated(storage, clock, config)) as client:
            started = time.monotonic()
            response = await client.get("/auth/oidc/login")
            waited = time.monotonic() - started
            assert response.headers["location"] == "/login?sso_error=unreachable"
            assert TIMEOUT_SECONDS - 0.5 < waited < TIMEOUT_SECONDS + 5


async def test_the_discovery_document_and_keys_are_cached(provider: Provider) -> None:
    client = OidcClient(_settings(provider.issuer))
    first = await client.metadata()
    assert first.issuer == provider.issuer and first.algorithms == ("RS256",)
    assert await client.metadata() is first
    keys = await client._key_set()
    assert await client._key_set() is keys
    assert await client._key_set(fresh=True) is keys  # an unknown kid refetches at most 1/min


async def test_next_after_sign_in_stays_on_this_site(
    client: httpx.AsyncClient, provider: Provider
) -> None:
    provider.set_claims("nexter", preferred_username="nexter")
    for evil in ("https://evil.example/", "//evil.example", "/\\evil.example", "/auth/oidc/login"):
        await client.post("/api/logout")
        response = await _sign_in(client, "nexter", next_path=evil)
        assert response.headers["location"] == "/", evil


async def test_only_the_two_routes_are_public(client: httpx.AsyncClient) -> None:
    assert (await client.get("/auth/oidc/other")).status_code == 303  # to the login page
    for method in ("POST", "HEAD"):
        assert (await client.request(method, "/auth/oidc/login")).status_code == 405


def test_the_provider_helper_pins_the_issuer(provider: Provider, tmp_path: Path) -> None:
    doc = httpx.get(f"{provider.issuer}/.well-known/openid-configuration", timeout=10).json()
    assert doc["issuer"] == provider.issuer
