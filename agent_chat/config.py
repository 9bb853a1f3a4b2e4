"""Settings read from the environment, in one place.

Nothing here runs at import time: call `load_settings()` where the values are needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from agent_chat.common.tool_profiles import enabled_profiles

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = PROJECT_ROOT / "data"

DEFAULT_BRIDGE_PORT = 18731
DEFAULT_APP_PORT = 3000
DEFAULT_SESSION_HOURS = 12.0
DEFAULT_STREAM_TTL_S = 3600.0
DEFAULT_LEASE_S = 5.0
DEFAULT_BRIDGE_DOWN_AFTER_S = 15.0
DEFAULT_MAX_UPLOAD_MB = 20
BRIDGE_EXTERNAL = "external"  # the bridge is its own process (python -m agent_chat.bridge)
BRIDGE_EMBEDDED = (
    "embedded"  # the bridge runs inside the web app's process (agent_chat/runs/embedded.py)
)


@dataclass(frozen=True)
class Settings:
    db_url: str
    bridge_url: str
    bridge_token: str | None
    app_host: str
    app_port: int
    skills_dir: Path
    max_active_runs: int
    max_message_chars: int
    # An initial default model, created when the model table is empty.
    env_model_base_url: str | None
    env_model_api_key: str | None
    env_model_name: str | None
    env_model_context_length: int | None
    # Accounts (agent_chat/auth/, db/users.py): the first administrator, made at start when
    # there is no user; `password` is an old install's shared password (AGENT_CHAT_PASSWORD),
    # which becomes that administrator's.
    password: str | None = None
    admin_user: str | None = None
    admin_password: str | None = None
    session_hours: float = DEFAULT_SESSION_HOURS
    # Tool profiles the operator enabled (agent_chat/common/tool_profiles.py), Chat by default.
    tool_profiles: tuple[str, ...] = ("chat",)
    # Several workers (runs/redis_bus.py, runs/leases.py): with a Redis URL, run events and
    # conversation states go through Redis and each run has one consumer by lease; without
    # one everything stays in this process.
    redis_url: str | None = None
    redis_stream_ttl_s: float = DEFAULT_STREAM_TTL_S  # how long a run's stream outlives it
    redis_lease_s: float = DEFAULT_LEASE_S  # a dead consumer's runs are taken over after this
    # Where the bridge runs (AGENT_CHAT_BRIDGE): its own process at `bridge_url` (external,
    # the default), or inside this web process (embedded: hosts that run one service, such
    # as Reflex Cloud; a web restart then stops running agents).
    bridge_mode: str = BRIDGE_EXTERNAL
    # Several bridges (runs/bridges.py, AGENT_CHAT_BRIDGE_URLS): every bridge's URL, the
    # first being `bridge_url`; empty for one bridge. All share `bridge_token`;
    # a bridge unreachable for longer than `bridge_down_after_s` fails its runs.
    bridge_urls: tuple[str, ...] = ()
    bridge_down_after_s: float = DEFAULT_BRIDGE_DOWN_AFTER_S

    @property
    def all_bridge_urls(self) -> tuple[str, ...]:
        """The bridges the app uses, the first one first (`bridge_url` alone by default)."""
        return self.bridge_urls or (self.bridge_url,)

    @property
    def embedded_bridge(self) -> bool:
        return self.bridge_mode == BRIDGE_EMBEDDED

    # Single sign-on (auth/oidc*.py): None unless issuer, client id and secret are all set.
    oidc: OidcSettings | None = None
    # Attachments (services/attachments.py): the largest file, and the S3-compatible bucket
    # their bytes go to (None: in the database, `attachment_chunk`).
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB
    s3: S3Settings | None = None


def _int(name: str, default: int | None) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc


def _positive_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a positive number, got {raw!r}")
    return value


def bridge_mode(redis_url: str | None) -> str:
    """AGENT_CHAT_BRIDGE: `external` (default) or `embedded`; anything else is refused, and
    so is an embedded bridge with several workers (a run lives in the one process that
    started it: another worker could neither follow, answer nor stop it)."""
    raw = os.environ.get("AGENT_CHAT_BRIDGE", "").strip().lower() or BRIDGE_EXTERNAL
    if raw not in (BRIDGE_EXTERNAL, BRIDGE_EMBEDDED):
        raise ValueError(f"AGENT_CHAT_BRIDGE must be 'external' or 'embedded', got {raw!r}")
    if raw == BRIDGE_EMBEDDED and redis_url:
        raise ValueError(
            "AGENT_CHAT_BRIDGE=embedded runs the agents inside one web process; it cannot be "
            "combined with AGENT_CHAT_REDIS_URL (several workers): run the bridge on its own"
        )
    # Reflex starts one backend worker per core when it has Redis (reflex/utils/processes.py:
    # get_num_workers) unless GRANIAN_WORKERS says otherwise.
    several = os.environ.get("GRANIAN_WORKERS", "").strip() != "1"
    if raw == BRIDGE_EMBEDDED and os.environ.get("REFLEX_REDIS_URL") and several:
        raise ValueError(
            "AGENT_CHAT_BRIDGE=embedded needs one backend worker: with REFLEX_REDIS_URL "
            "set GRANIAN_WORKERS=1 too"
        )
    return raw


def check_workers(redis_url: str | None) -> None:
    """Several web workers (Reflex starts them when REFLEX_REDIS_URL reaches a Redis, unless
    GRANIAN_WORKERS=1) share runs only through AGENT_CHAT_REDIS_URL: without it each would
    know only its own runs, so that set-up is refused."""
    several = os.environ.get("GRANIAN_WORKERS", "").strip() != "1"
    if os.environ.get("REFLEX_REDIS_URL") and several and not redis_url:
        raise ValueError(
            "REFLEX_REDIS_URL makes Reflex start several web workers, which share runs only "
            "through AGENT_CHAT_REDIS_URL: set it too (it may be the same Redis), or "
            "GRANIAN_WORKERS=1"
        )


def bridge_urls(mode: str) -> tuple[str, ...]:
    """AGENT_CHAT_BRIDGE_URLS (comma-separated) or AGENT_CHAT_BRIDGE_URL (one bridge), the
    default port on this machine otherwise. Both set is refused unless they name the same
    bridges; so are an empty entry, a URL that is not http(s), a duplicate, and several
    bridges with the embedded one (it is the only bridge then)."""
    one = os.environ.get("AGENT_CHAT_BRIDGE_URL", "").strip().rstrip("/")
    raw = os.environ.get("AGENT_CHAT_BRIDGE_URLS", "").strip()
    if not raw:
        return (one or f"http://127.0.0.1:{DEFAULT_BRIDGE_PORT}",)
    urls = tuple(part.strip().rstrip("/") for part in raw.split(","))
    for url in urls:
        if not url:
            raise ValueError(f"AGENT_CHAT_BRIDGE_URLS has an empty entry: {raw!r}")
        if not url.startswith(("http://", "https://")) or url[-3:] == "://":
            raise ValueError(f"AGENT_CHAT_BRIDGE_URLS: {url!r} is not an http(s) URL")
    if len(set(urls)) != len(urls):
        raise ValueError(f"AGENT_CHAT_BRIDGE_URLS names a bridge twice: {raw!r}")
    if one and (one,) != urls:
        raise ValueError(
            "Set AGENT_CHAT_BRIDGE_URLS or AGENT_CHAT_BRIDGE_URL, not both: "
            f"{raw!r} and {one!r} differ (AGENT_CHAT_BRIDGE_URL is the one-bridge form)"
        )
    if mode == BRIDGE_EMBEDDED:
        raise ValueError(
            "AGENT_CHAT_BRIDGE=embedded is the only bridge, inside the web app; it cannot be "
            "combined with AGENT_CHAT_BRIDGE_URLS: unset one of them"
        )
    return urls


def default_db_url() -> str:
    return f"sqlite:///{DATA_DIR / 'agent_chat.db'}"


def normalize_db_url(url: str) -> str:
    """`postgresql://` and `postgres://` mean psycopg 3, the PostgreSQL driver we install.

    SQLAlchemy would take `postgresql://` for psycopg2 (not installed) and rejects `postgres://`
    (the form many hosting services hand out). Other URLs are returned unchanged.
    """
    scheme, separator, rest = url.partition("://")
    if separator and scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return url


def load_settings() -> Settings:
    env = os.environ.get
    redis_url = env("AGENT_CHAT_REDIS_URL") or None
    mode = bridge_mode(redis_url)
    check_workers(redis_url)
    urls = bridge_urls(mode)
    return Settings(
        db_url=normalize_db_url(env("AGENT_CHAT_DB_URL") or default_db_url()),
        bridge_url=urls[0],
        bridge_token=env("AGENT_CHAT_BRIDGE_TOKEN") or None,
        app_host=env("AGENT_CHAT_HOST") or "127.0.0.1",
        app_port=_int("AGENT_CHAT_PORT", DEFAULT_APP_PORT) or DEFAULT_APP_PORT,
        skills_dir=Path(env("AGENT_CHAT_SKILLS_DIR") or PROJECT_ROOT / "skills"),
        max_active_runs=_int("AGENT_CHAT_MAX_ACTIVE_RUNS", 5) or 5,
        max_message_chars=_int("AGENT_CHAT_MAX_MESSAGE_CHARS", 100_000) or 100_000,
        env_model_base_url=env("AGENT_CHAT_MODEL_BASE_URL") or None,
        env_model_api_key=env("AGENT_CHAT_MODEL_API_KEY") or None,
        env_model_name=env("AGENT_CHAT_MODEL") or None,
        env_model_context_length=_int("AGENT_CHAT_MODEL_CONTEXT_LENGTH", None),
        password=env("AGENT_CHAT_PASSWORD") or None,
        admin_user=env("AGENT_CHAT_ADMIN_USER") or None,
        admin_password=env("AGENT_CHAT_ADMIN_PASSWORD") or None,
        session_hours=_positive_float("AGENT_CHAT_SESSION_HOURS", DEFAULT_SESSION_HOURS),
        tool_profiles=enabled_profiles(),
        redis_url=redis_url,
        redis_stream_ttl_s=_positive_float("AGENT_CHAT_REDIS_STREAM_TTL", DEFAULT_STREAM_TTL_S),
        redis_lease_s=_positive_float("AGENT_CHAT_REDIS_LEASE_S", DEFAULT_LEASE_S),
        bridge_mode=mode,
        bridge_urls=urls if len(urls) > 1 else (),
        bridge_down_after_s=_positive_float(
            "AGENT_CHAT_BRIDGE_DOWN_AFTER_S", DEFAULT_BRIDGE_DOWN_AFTER_S
        ),
        oidc=load_oidc_settings(),
        max_upload_mb=_positive_int("AGENT_CHAT_MAX_UPLOAD_MB", DEFAULT_MAX_UPLOAD_MB),
        s3=load_s3_settings(),
    )


def _positive_int(name: str, default: int) -> int:
    value = _int(name, default)
    if value is None or value < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
    return value


@dataclass(frozen=True)
class S3Settings:
    """An S3-compatible bucket for the attachments' bytes (AGENT_CHAT_S3_*). `endpoint_url`
    None is AWS itself; the keys None are boto3's own chain (environment, instance role)."""

    bucket: str
    endpoint_url: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    region: str | None = None
    prefix: str = "attachments/"


def load_s3_settings() -> S3Settings | None:
    """None without AGENT_CHAT_S3_BUCKET; a key id without its secret (or the reverse) is
    refused at start."""
    env = os.environ.get
    bucket = (env("AGENT_CHAT_S3_BUCKET") or "").strip()
    if not bucket:
        return None
    key_id = (env("AGENT_CHAT_S3_ACCESS_KEY_ID") or "").strip() or None
    secret = (env("AGENT_CHAT_S3_SECRET_ACCESS_KEY") or "").strip() or None
    if (key_id is None) != (secret is None):
        raise ValueError(
            "AGENT_CHAT_S3_ACCESS_KEY_ID and AGENT_CHAT_S3_SECRET_ACCESS_KEY go together"
        )
    return S3Settings(
        bucket=bucket,
        endpoint_url=(env("AGENT_CHAT_S3_ENDPOINT_URL") or "").strip() or None,
        access_key_id=key_id,
        secret_access_key=secret,
        region=(env("AGENT_CHAT_S3_REGION") or "").strip() or None,
    )


# --- single sign-on with OpenID Connect (off unless configured) ------------------------------

OIDC_DEFAULT_NAME = "Single sign-on"
OIDC_DEFAULT_SCOPES = "openid profile email"
_OIDC_REQUIRED = (
    "AGENT_CHAT_OIDC_ISSUER",
    "AGENT_CHAT_OIDC_CLIENT_ID",
    "AGENT_CHAT_OIDC_CLIENT_SECRET",
)
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class OidcSettings:
    """An OpenID provider to sign in with. `admin_claim`: a claim that makes its holder an
    administrator (at each sign-in): equal to `admin_value` or a list holding it, or `true`
    when no value is given. `redirect_uri`: unset, it is built from the request's origin."""

    issuer: str
    client_id: str
    client_secret: str
    name: str = OIDC_DEFAULT_NAME
    scopes: str = OIDC_DEFAULT_SCOPES
    admin_claim: str | None = None
    admin_value: str | None = None
    redirect_uri: str | None = None


def _https_url(name: str, raw: str) -> str:
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise ValueError(f"{name} must be an https URL, got {raw!r}")
    if parts.scheme == "http" and parts.hostname not in _LOOPBACK:
        raise ValueError(f"{name} must use https (plain http only on this machine), got {raw!r}")
    return raw


def load_oidc_settings() -> OidcSettings | None:
    """The provider from AGENT_CHAT_OIDC_*; None when none of the three required variables is
    set; ValueError (a start-up error) for a partial or malformed configuration."""
    values = {name: os.environ.get(name, "").strip() for name in _OIDC_REQUIRED}
    missing = [name for name, value in values.items() if not value]
    if len(missing) == len(_OIDC_REQUIRED):
        return None
    if missing:
        raise ValueError(
            "Single sign-on needs AGENT_CHAT_OIDC_ISSUER, AGENT_CHAT_OIDC_CLIENT_ID and "
            f"AGENT_CHAT_OIDC_CLIENT_SECRET together; missing: {', '.join(missing)}"
        )
    env = os.environ.get
    issuer = _https_url("AGENT_CHAT_OIDC_ISSUER", values["AGENT_CHAT_OIDC_ISSUER"]).rstrip("/")
    scopes = " ".join((env("AGENT_CHAT_OIDC_SCOPES") or OIDC_DEFAULT_SCOPES).split())
    if "openid" not in scopes.split():
        raise ValueError(f"AGENT_CHAT_OIDC_SCOPES must include openid, got {scopes!r}")
    admin_claim = (env("AGENT_CHAT_OIDC_ADMIN_CLAIM") or "").strip() or None
    admin_value = (env("AGENT_CHAT_OIDC_ADMIN_VALUE") or "").strip() or None
    if admin_value and not admin_claim:
        raise ValueError("AGENT_CHAT_OIDC_ADMIN_VALUE needs AGENT_CHAT_OIDC_ADMIN_CLAIM")
    redirect_uri = (env("AGENT_CHAT_OIDC_REDIRECT_URI") or "").strip() or None
    if redirect_uri:
        _https_url("AGENT_CHAT_OIDC_REDIRECT_URI", redirect_uri)
    return OidcSettings(
        issuer=issuer,
        client_id=values["AGENT_CHAT_OIDC_CLIENT_ID"],
        client_secret=values["AGENT_CHAT_OIDC_CLIENT_SECRET"],
        name=" ".join((env("AGENT_CHAT_OIDC_NAME") or "").split())[:60] or OIDC_DEFAULT_NAME,
        scopes=scopes,
        admin_claim=admin_claim,
        admin_value=admin_value,
        redirect_uri=redirect_uri,
    )
