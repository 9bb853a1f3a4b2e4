"""Use cases on the models (OpenAI-compatible endpoints): list them (everyone), and, for an
administrator only, add, change, delete, make the default, and test an endpoint.

The page (state/models.py) and the HTTP API's catalog (`GET /api/models`, api/catalog.py)
call these. Each change takes the acting person (`user_id`) and refuses anyone but an active
administrator with `Forbidden` (`ADMINS_ONLY`), read now; bad input is the store's
`ValidationFailed` naming the field; an unknown model is `NotFound`.

A stored API key stays with its base URL: a new URL without a new key clears it
(`model_configs.update_model`, reported in `SavedModel.key_removed`), and the test sends the
stored key only to the stored URL. The key never leaves the server.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session

from agent_chat.db import model_configs
from agent_chat.db.model_configs import same_base_url
from agent_chat.db.models import ModelConfig
from agent_chat.runs.model_probe import probe_model
from agent_chat.services.backend import Backend
from agent_chat.services.ids import row_id
from agent_chat.services.users import require_admin as _require_admin

__all__ = ["same_base_url"]  # the page compares a typed URL with the stored one

ADMINS_ONLY = "Only an administrator can add, change, test or delete models."
KEY_NOT_SENT_NOTE = " (Tested without the stored API key: the base URL changed.)"


async def require_admin(svc: Backend, *, user_id: int | None) -> None:
    """`Forbidden` (`ADMINS_ONLY`) unless the acting person is an active administrator now."""
    await _require_admin(svc, user_id=user_id, refusal=ADMINS_ONLY)


async def list_models(svc: Backend) -> list[ModelConfig]:
    """Every model, oldest first: anyone signed in chooses among them (never sees a key)."""
    return await svc.storage.call(model_configs.list_models)


async def create_model(
    svc: Backend,
    *,
    user_id: int,
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
    """A new model (the first one is the default whatever `is_default` says)."""
    await require_admin(svc, user_id=user_id)
    return await svc.storage.call(
        model_configs.create_model,
        name=name,
        base_url=base_url,
        model_name=model_name,
        api_key=api_key or None,
        context_length=context_length,
        is_default=is_default,
        price_input=price_input,
        price_output=price_output,
        supports_images=supports_images,
    )


@dataclass(frozen=True)
class SavedModel:
    model: ModelConfig
    key_removed: bool  # the base URL changed without a new key: the stored key is gone


def _update(*, session: Session, model_id: int, **fields: object) -> SavedModel:
    """Read whether it had a key and change it, in one transaction."""
    before = model_configs.get_model(session=session, model_id=model_id)
    had_key = bool(before and before.api_key)
    after = model_configs.update_model(session=session, model_id=model_id, **fields)
    return SavedModel(after, key_removed=had_key and not after.api_key)


async def update_model(
    svc: Backend, *, user_id: int, model_id: int, api_key: str | None = None, **fields: object
) -> SavedModel:
    """Change the given fields (those of `create_model`, `supports_images` among them).
    `api_key=None` or "" keeps the stored key, unless the base URL changes: then it is
    removed (`key_removed`)."""
    await require_admin(svc, user_id=user_id)
    model_id = row_id(model_id, "Model")
    return await svc.storage.call(_update, model_id=model_id, api_key=api_key or None, **fields)


async def delete_model(svc: Backend, *, user_id: int, model_id: int) -> None:
    """Delete it; conversations using it fall back to the default (another model becomes
    the default if it was)."""
    await require_admin(svc, user_id=user_id)
    model_id = row_id(model_id, "Model")
    await svc.storage.call(model_configs.delete_model, model_id=model_id)


async def make_default(svc: Backend, *, user_id: int, model_id: int) -> ModelConfig:
    """The model a new conversation gets."""
    await require_admin(svc, user_id=user_id)
    model_id = row_id(model_id, "Model")
    return await svc.storage.call(model_configs.set_default_model, model_id=model_id)


async def check_endpoint(
    svc: Backend,
    *,
    user_id: int,
    base_url: str,
    model_name: str,
    api_key: str = "",
    model_id: int = 0,
    check_image: bool = False,
) -> tuple[bool, str]:
    """Whether the endpoint answers (`runs/model_probe.py`), and a sentence for the person.
    With no `api_key`, model `model_id`'s stored key is sent, only to its own base URL.
    `check_image` (the form says "Reads images"): whether it also takes an image part."""
    await require_admin(svc, user_id=user_id)
    base_url, note = base_url.strip(), ""
    if not api_key and model_id:
        stored = await svc.storage.call(model_configs.get_model, model_id=row_id(model_id, "Model"))
        if stored and stored.api_key:
            if same_base_url(stored.base_url, base_url):
                api_key = stored.api_key
            else:
                note = KEY_NOT_SENT_NOTE
    ok, message = await probe_model(
        base_url=base_url, model_name=model_name.strip(), api_key=api_key, check_image=check_image
    )
    return ok, message + note
