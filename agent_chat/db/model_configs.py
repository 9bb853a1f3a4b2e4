"""Store functions for model endpoints (`model_config`).

Rules: when any model exists exactly one is the default. The first model becomes the default,
making a model the default unsets the others, and deleting the default promotes the oldest
remaining model. A stored API key belongs to its base URL: changing the URL without giving a
key clears it (`update_model`), so a key is never sent to an address it was not given for.
Names are unique by their key (`names.name_key`: `GPT` and `ｇｐｔ` are one name).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import ParseResult, urlparse

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from agent_chat.config import Settings
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.models import ModelConfig
from agent_chat.db.names import name_key, violates

log = logging.getLogger(__name__)

UNIQUE_NAME = "uq_model_config_name_key"

_UPDATABLE = {
    "name",
    "base_url",
    "model_name",
    "api_key",
    "context_length",
    "is_default",
    "supports_images",
    "price_input",
    "price_output",
}


def _check_prices(errors: dict[str, str], prices: dict[str, Any]) -> None:
    for field, value in prices.items():
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value < 0
        ):
            errors[field] = "A price is a number of dollars per million tokens, 0 or more."


def _endpoint(url: str) -> tuple[object, ...]:
    """What must match for two base URLs to be one address: scheme and host in any case, the
    default port written or not, the path with or without trailing slashes. Anything else that
    differs (host, port, path, query, user info, percent-encoding) is another address."""
    url = url.strip()
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    try:
        port = parsed.port
    except ValueError:  # a bad port: compare the text (validation refuses such a URL anyway)
        return (url,)
    if port == {"http": 80, "https": 443}.get(scheme):
        port = None
    return (
        scheme,
        parsed.username,
        parsed.password,
        parsed.hostname or "",
        port,
        parsed.path.rstrip("/"),
        parsed.params,
        parsed.query,
        parsed.fragment,
    )


def same_base_url(a: str, b: str) -> bool:
    """Whether two base URLs are the same address (see `_endpoint`), so a stored key may go to
    `b` when it was given for `a`."""
    return _endpoint(a) == _endpoint(b)


def _require(session: Session, model_id: int) -> ModelConfig:
    model = session.get(ModelConfig, model_id)
    if model is None:
        raise NotFound(f"Model {model_id} does not exist")
    return model


def _port_ok(parsed: ParseResult) -> bool:
    try:
        return parsed.port != 0  # urlparse refuses the rest: not a number, out of range
    except ValueError:
        return False


def _validate(
    session: Session,
    *,
    name: str,
    base_url: str,
    model_name: str,
    context_length: int | None,
    own_id: int | None = None,
    prices: dict[str, Any] | None = None,
) -> None:
    """Raise ValidationFailed listing every bad field."""
    errors: dict[str, str] = {}
    _check_prices(errors, prices or {})
    if not name:
        errors["name"] = "A name is required."
    else:
        query = select(ModelConfig).where(col(ModelConfig.name_key) == name_key(name))
        clash = session.exec(query).first()
        if clash is not None and clash.id != own_id:
            errors["name"] = _taken(name)
    parsed = urlparse(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        errors["base_url"] = "The base URL must be an http:// or https:// URL with a host."
    elif not _port_ok(parsed):
        errors["base_url"] = "The base URL's port must be a number from 1 to 65535."
    if not model_name:
        errors["model_name"] = "A model name is required."
    if context_length is not None and (
        isinstance(context_length, bool)
        or not isinstance(context_length, int)
        or context_length <= 0
    ):
        errors["context_length"] = "The context length must be a positive whole number."
    if errors:
        raise ValidationFailed(errors)


def _taken(name: str) -> str:
    return f"A model named {name!r} already exists."


def _flush_name(session: Session, model: ModelConfig, name: str) -> None:
    """Write the model; a name another transaction took since `_validate` is the same field
    error (the caller's transaction is then to be rolled back, as for any error)."""
    session.add(model)
    try:
        session.flush()
    except IntegrityError as exc:
        if violates(exc, constraint=UNIQUE_NAME, columns=("model_config.name_key",)):
            raise ValidationFailed({"name": _taken(name)}) from exc
        raise


def _make_default(session: Session, model: ModelConfig) -> None:
    session.execute(
        update(ModelConfig).where(col(ModelConfig.id) != model.id).values(is_default=False)
    )
    model.is_default = True
    session.add(model)


def _oldest(session: Session) -> ModelConfig | None:
    query = select(ModelConfig).order_by(col(ModelConfig.created_at), col(ModelConfig.id))
    return session.exec(query).first()


def create_model(
    *,
    session: Session,
    name: str,
    base_url: str,
    model_name: str,
    api_key: str | None = None,
    context_length: int | None = None,
    is_default: bool = False,
    price_input: float | None = None,
    price_output: float | None = None,
    supports_images: bool = False,
) -> ModelConfig:
    name, base_url, model_name = name.strip(), base_url.strip(), model_name.strip()
    prices = {"price_input": price_input, "price_output": price_output}
    _validate(
        session,
        name=name,
        base_url=base_url,
        model_name=model_name,
        context_length=context_length,
        prices=prices,
    )
    first = _oldest(session) is None
    model = ModelConfig(
        name=name,
        base_url=base_url,
        model_name=model_name,
        api_key=api_key or None,
        context_length=context_length,
        supports_images=bool(supports_images),
        **prices,
    )
    _flush_name(session, model, name)
    if is_default or first:
        _make_default(session, model)
    session.flush()
    return model


def update_model(*, session: Session, model_id: int, **fields: Any) -> ModelConfig:
    """Change some fields. `api_key=None` keeps the key, `api_key=""` clears it, and a new
    `base_url` (not `same_base_url` as the stored one) without a new key clears it too: whoever
    can edit a model must not be able to send its stored key to an address of their choosing.

    `is_default=True` makes this the default; `is_default=False` is ignored, because the
    default changes only by choosing another model (there is always one).
    """
    unknown = set(fields) - _UPDATABLE
    if unknown:
        raise TypeError(f"update_model() got unknown fields: {', '.join(sorted(unknown))}")
    model = _require(session, model_id)
    name = (fields.get("name", model.name) or "").strip()
    base_url = (fields.get("base_url", model.base_url) or "").strip()
    model_name = (fields.get("model_name", model.model_name) or "").strip()
    context_length = fields.get("context_length", model.context_length)
    prices = {
        "price_input": fields.get("price_input", model.price_input),
        "price_output": fields.get("price_output", model.price_output),
    }
    _validate(
        session,
        name=name,
        base_url=base_url,
        model_name=model_name,
        context_length=context_length,
        own_id=model.id,
        prices=prices,
    )
    moved = not same_base_url(model.base_url, base_url)
    model.name, model.base_url, model.model_name = name, base_url, model_name
    model.context_length = context_length
    model.supports_images = bool(fields.get("supports_images", model.supports_images))
    model.price_input, model.price_output = prices["price_input"], prices["price_output"]
    api_key = fields.get("api_key")
    if api_key is not None:
        model.api_key = api_key or None
    elif moved and model.api_key:
        model.api_key = None
        log.info(
            "Model %s: base URL changed without a new key; the stored key was removed", model_id
        )
    _flush_name(session, model, name)
    if fields.get("is_default"):
        _make_default(session, model)
    session.flush()
    return model


def delete_model(*, session: Session, model_id: int) -> None:
    """Delete a model; sessions using it fall back to the default (model_id SET NULL)."""
    model = _require(session, model_id)
    was_default = model.is_default
    session.delete(model)
    session.flush()
    if was_default:
        successor = _oldest(session)
        if successor is not None:
            _make_default(session, successor)
            session.flush()


def list_models(*, session: Session) -> list[ModelConfig]:
    """All models, oldest first."""
    query = select(ModelConfig).order_by(col(ModelConfig.created_at), col(ModelConfig.id))
    return list(session.exec(query).all())


def get_model(*, session: Session, model_id: int) -> ModelConfig | None:
    return session.get(ModelConfig, model_id)


def get_default_model(*, session: Session) -> ModelConfig | None:
    query = (
        select(ModelConfig)
        .where(col(ModelConfig.is_default).is_(True))
        .order_by(col(ModelConfig.id))
    )
    return session.exec(query).first()


def set_default_model(*, session: Session, model_id: int) -> ModelConfig:
    model = _require(session, model_id)
    _make_default(session, model)
    session.flush()
    return model


def ensure_env_model(*, session: Session, settings: Settings) -> ModelConfig | None:
    """Seed a default model "Default" from AGENT_CHAT_MODEL_* when there is no model yet.

    Returns the created model, or None when nothing was created. Bad settings are logged,
    not raised: the app must start and point the user to the model settings page.
    """
    if not (settings.env_model_base_url and settings.env_model_name):
        return None
    if _oldest(session) is not None:
        return None
    try:
        model = create_model(
            session=session,
            name="Default",
            base_url=settings.env_model_base_url,
            model_name=settings.env_model_name,
            api_key=settings.env_model_api_key,
            context_length=settings.env_model_context_length,
            is_default=True,
        )
    except ValidationFailed as exc:
        log.warning("AGENT_CHAT_MODEL_* settings ignored: %s", exc)
        return None
    log.info("Created the default model from AGENT_CHAT_MODEL_* (%s)", model.model_name)
    return model
