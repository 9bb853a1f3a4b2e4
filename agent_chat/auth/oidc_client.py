"""Talking to the OpenID provider (Authlib's httpx client, joserfc for the ID token): the
discovery document and keys (cached, with a timeout), the authorization URL (code flow with
`state`, `nonce` and PKCE S256), the code exchange, the ID token's signature and claims, and
userinfo.

The ID token is validated here with every claim named, not with Authlib's `parse_id_token`
(in 1.9.10 it accepts a token for another audience when its `azp` is ours): `iss` is the
issuer, `aud` holds our client id, `azp` when present (needed with several audiences) is
ours, `exp` and `iat` are there and sane, `nonce` is the one this browser's attempt sent.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

from agent_chat.config import OidcSettings

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 5.0
METADATA_SECONDS = 3600.0  # the discovery document and keys are fetched again after this
KEYS_REFETCH_SECONDS = 60.0  # an unknown key id fetches the keys again, at most this often
LEEWAY_SECONDS = 60  # clock skew allowed on exp / iat
# Asymmetric signatures only: never `none`, never an HMAC keyed with the client secret.
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")  # fmt: skip


class ProviderUnavailable(Exception):
    """The provider could not be reached or sent no usable discovery document."""


class Rejected(Exception):
    """The provider's answer is not a valid sign-in (why, for the log)."""


@dataclass(frozen=True)
class Metadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str | None
    algorithms: tuple[str, ...]
    token_auth_method: str


def validate_id_token_claims(
    claims: dict[str, Any], *, issuer: str, client_id: str, nonce: str, now: float
) -> None:
    """Every check on a decoded ID token's claims (Rejected says which failed)."""
    registry = jwt.JWTClaimsRegistry(
        now=int(now),
        leeway=LEEWAY_SECONDS,
        iss={"essential": True, "value": issuer},
        sub={"essential": True},
        aud={"essential": True, "value": client_id},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(claims)
    except JoseError as exc:
        raise Rejected(f"ID token: {exc.error}: {exc.description}") from exc
    # Belt and braces on what must never slip: the library checks these too.
    if claims.get("iss") != issuer:
        raise Rejected("ID token: wrong issuer")
    audience = claims.get("aud")
    audiences = [audience] if isinstance(audience, str) else list(audience or [])
    if client_id not in audiences:
        raise Rejected("ID token: not for this client (aud)")
    azp = claims.get("azp")
    if azp is not None and azp != client_id:
        raise Rejected("ID token: authorised for another client (azp)")
    if len(audiences) > 1 and azp is None:
        raise Rejected("ID token: several audiences and no azp")
    if claims.get("nonce") != nonce:
        raise Rejected("ID token: wrong nonce")
    issued = claims.get("iat")
    if not isinstance(issued, int | float) or issued > now + LEEWAY_SECONDS:
        raise Rejected("ID token: issued in the future (iat)")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise Rejected("ID token: no subject")


def is_admin(claims: dict[str, Any], claim: str | None, value: str | None) -> bool | None:
    """What the configured admin claim says: None when none is configured; with a value, the
    claim equals it or is a list holding it; without one, the claim is true."""
    if claim is None:
        return None
    found = claims.get(claim)
    if value is None:
        return found is True or (isinstance(found, str) and found.lower() == "true")
    if isinstance(found, list):
        return value in [str(item) for item in found]
    if isinstance(found, bool):
        return str(found).lower() == value.lower()
    return found is not None and str(found) == value


class OidcClient:
    """One provider; the discovery document and keys are cached (METADATA_SECONDS)."""

    def __init__(
        self,
        settings: OidcSettings,
        *,
        clock: Callable[[], float] = time.time,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.timeout = timeout
        self._metadata: Metadata | None = None
        self._metadata_at = 0.0
        self._keys: KeySet | None = None
        self._keys_at = 0.0
        self._ssl: ssl.SSLContext | None = None

    def _verify(self) -> ssl.SSLContext:
        """One TLS context for every request: making one loads the CA bundle (a quarter of
        a second on a busy machine), which a new client per request would pay each time."""
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        return self._ssl

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            timeout=self.timeout, follow_redirects=False, verify=self._verify()
        )

    async def metadata(self) -> Metadata:
        now = time.monotonic()
        if self._metadata is not None and now - self._metadata_at < METADATA_SECONDS:
            return self._metadata
        url = f"{self.settings.issuer}/.well-known/openid-configuration"
        try:
            async with self._http() as http:
                reply = await http.get(url, headers={"Accept": "application/json"})
            reply.raise_for_status()
            doc = reply.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ProviderUnavailable(f"{url}: {exc!r}") from exc
        if not isinstance(doc, dict):
            raise ProviderUnavailable(f"{url}: not a JSON object")
        if str(doc.get("issuer", "")).rstrip("/") != self.settings.issuer:
            raise ProviderUnavailable(
                f"{url}: its issuer is {doc.get('issuer')!r}, not {self.settings.issuer!r}"
            )
        try:
            offered = doc.get("id_token_signing_alg_values_supported") or ["RS256"]
            methods = doc.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
            metadata = Metadata(
                issuer=str(doc["issuer"]),
                authorization_endpoint=str(doc["authorization_endpoint"]),
                token_endpoint=str(doc["token_endpoint"]),
                jwks_uri=str(doc["jwks_uri"]),
                userinfo_endpoint=doc.get("userinfo_endpoint") or None,
                algorithms=tuple(a for a in offered if a in SIGNING_ALGORITHMS),
                token_auth_method=(
                    "client_secret_basic"
                    if "client_secret_basic" in methods
                    else "client_secret_post"
                ),
            )
        except KeyError as exc:
            raise ProviderUnavailable(f"{url}: no {exc.args[0]}") from exc
        if not metadata.algorithms:
            raise ProviderUnavailable(f"{url}: no asymmetric ID token signature offered")
        self._metadata, self._metadata_at = metadata, now
        return metadata

    async def _key_set(self, *, fresh: bool = False) -> KeySet:
        now = time.monotonic()
        stale = self._keys is None or now - self._keys_at >= METADATA_SECONDS
        if self._keys is not None and not stale and not fresh:
            return self._keys
        if self._keys is not None and fresh and now - self._keys_at < KEYS_REFETCH_SECONDS:
            return self._keys
        metadata = await self.metadata()
        try:
            async with self._http() as http:
                reply = await http.get(metadata.jwks_uri)
            reply.raise_for_status()
            keys = KeySet.import_key_set(reply.json())
        except (httpx.HTTPError, ValueError, JoseError) as exc:
            raise ProviderUnavailable(f"{metadata.jwks_uri}: {exc!r}") from exc
        self._keys, self._keys_at = keys, now
        return keys

    def _oauth(self, metadata: Metadata, redirect_uri: str) -> Any:
        # Imported when single sign-on is used: an app without it never loads Authlib (whose
        # httpx integration warns at import that it would rather have the httpx2 package).
        from authlib.integrations.httpx_client import AsyncOAuth2Client

        return AsyncOAuth2Client(
            client_id=self.settings.client_id,
            client_secret=self.settings.client_secret,
            token_endpoint_auth_method=metadata.token_auth_method,
            scope=self.settings.scopes,
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            timeout=self.timeout,
            verify=self._verify(),
        )

    async def authorization_url(
        self, *, redirect_uri: str, state: str, nonce: str, code_verifier: str
    ) -> str:
        metadata = await self.metadata()
        async with self._oauth(metadata, redirect_uri) as client:
            url, _ = client.create_authorization_url(
                metadata.authorization_endpoint,
                state=state,
                code_verifier=code_verifier,
                nonce=nonce,
            )
        return url

    async def sign_in_claims(
        self, *, code: str, redirect_uri: str, code_verifier: str, nonce: str
    ) -> dict[str, Any]:
        """Exchange the code, check the ID token, add userinfo: the person's claims (`iss`
        and `sub` always from the ID token). Rejected / ProviderUnavailable."""
        from authlib.integrations.base_client import OAuthError  # (see _oauth)

        metadata = await self.metadata()
        try:
            async with self._oauth(metadata, redirect_uri) as client:
                token = await client.fetch_token(
                    metadata.token_endpoint,
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=code_verifier,
                    redirect_uri=redirect_uri,
                )
        except httpx.HTTPError as exc:  # unreachable, or a 5xx / non-JSON answer
            raise ProviderUnavailable(f"{metadata.token_endpoint}: {exc!r}") from exc
        except OAuthError as exc:  # the provider said no (invalid_grant, invalid_client ...)
            raise Rejected(f"token endpoint: {exc}") from exc
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise Rejected("token endpoint: no ID token")
        claims = await self._verified(id_token, metadata, nonce)
        access_token = token.get("access_token")
        if metadata.userinfo_endpoint and isinstance(access_token, str):
            extra = await self._userinfo(metadata.userinfo_endpoint, access_token)
            if extra.get("sub") != claims["sub"]:
                raise Rejected("userinfo: another subject")
            claims = {**extra, **claims}
        return claims

    async def _verified(self, id_token: str, metadata: Metadata, nonce: str) -> dict[str, Any]:
        for fresh in (False, True):  # a key id we do not know: the keys once more
            keys = await self._key_set(fresh=fresh)
            try:
                decoded = jwt.decode(id_token, keys, algorithms=list(metadata.algorithms))
                break
            except InvalidKeyIdError as exc:
                if fresh:
                    raise Rejected(f"ID token: {exc.description}") from exc
            except JoseError as exc:
                raise Rejected(f"ID token: {exc.error}: {exc.description}") from exc
            except ValueError as exc:
                raise Rejected(f"ID token: {exc}") from exc
        claims = dict(decoded.claims)
        validate_id_token_claims(
            claims,
            issuer=metadata.issuer,
            client_id=self.settings.client_id,
            nonce=nonce,
            now=self.clock(),
        )
        return claims

    async def _userinfo(self, url: str, access_token: str) -> dict[str, Any]:
        try:
            async with self._http() as http:
                reply = await http.get(url, headers={"Authorization": f"Bearer {access_token}"})
            reply.raise_for_status()
            data = reply.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ProviderUnavailable(f"{url}: {exc!r}") from exc
        if not isinstance(data, dict):
            raise Rejected("userinfo: not a JSON object")
        return data
