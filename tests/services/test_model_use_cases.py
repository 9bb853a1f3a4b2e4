"""The use cases on models (services/models.py): list (everyone), and, an administrator's
only, create, update, delete, make the default, test an endpoint. For each change: an
administrator succeeds; a member (and a disabled administrator, and nobody) gets `Forbidden`
and nothing changes; bad input is `ValidationFailed` naming the field; an unknown model (or
an id that is not one) is `NotFound`. A stored key goes only to its own base URL."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import Engine

from agent_chat.db import model_configs, users
from agent_chat.db.engine import open_session
from agent_chat.db.errors import Forbidden, NotFound, ValidationFailed
from agent_chat.runs.storage import Storage
from agent_chat.services import models
from tests.support.users import user_on

NOT_IDS = (10**9, "1", None, True)
URL = "http://models.test/v1"


@pytest.fixture
def svc(storage: Storage) -> SimpleNamespace:
    return SimpleNamespace(storage=storage)


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """What the test button would send where (no endpoint is called)."""
    sent: list[dict] = []

    async def probe(**kwargs: str) -> tuple[bool, str]:
        sent.append(kwargs)
        return True, "The endpoint answered."

    monkeypatch.setattr(models, "probe_model", probe)
    return sent


def _models(engine: Engine) -> list[tuple]:
    with open_session(engine) as session:
        return [
            (m.name, m.base_url, m.model_name, m.api_key, m.is_default, m.context_length)
            for m in model_configs.list_models(session=session)
        ]


async def _model(svc: SimpleNamespace, admin: int, name: str = "Local", **kwargs):
    return await models.create_model(
        svc, user_id=admin, name=name, base_url=URL, model_name="m", **kwargs
    )


async def _refused(svc, engine: Engine, member: int, use_case, **kwargs) -> None:
    """`use_case` by a member, a disabled administrator and nobody: `Forbidden`, no change."""
    carol = user_on(engine, "carol", admin=True)
    with open_session(engine) as session:
        users.set_disabled(session=session, user_id=carol, disabled=True)
    before = _models(engine)
    for who in (member, carol, None, 10**9):
        with pytest.raises(Forbidden, match="Only an administrator can add, change"):
            await use_case(svc, user_id=who, **kwargs)
    assert _models(engine) == before


async def test_list_models_is_everyones(svc, user: int, other_user: int) -> None:
    await _model(svc, user, "B")
    await _model(svc, user, "A")
    assert [m.name for m in await models.list_models(svc)] == ["B", "A"]  # oldest first


async def test_create_model(svc, engine: Engine, user: int, other_user: int) -> None:
    made = await _model(svc, user, api_key="sk-1", context_length=8000)
    assert (made.name, made.api_key, made.is_default) == ("Local", "sk-1", True)  # the first
    await _refused(
        svc, engine, other_user, models.create_model, name="Mine", base_url=URL, model_name="m"
    )
    before = _models(engine)
    for field, kwargs in (
        ("name", {"name": " "}),
        ("name", {"name": "LOCAL"}),  # taken
        ("base_url", {"base_url": "ftp://models.test"}),
        ("model_name", {"model_name": ""}),
        ("context_length", {"context_length": -1}),
        ("price_input", {"price_input": -1.0}),
    ):
        fields = {"name": "Other", "base_url": URL, "model_name": "m", **kwargs}
        with pytest.raises(ValidationFailed) as refused:
            await models.create_model(svc, user_id=user, **fields)
        assert field in refused.value.field_errors
    assert _models(engine) == before


async def test_update_model(svc, engine: Engine, user: int, other_user: int) -> None:
    made = await _model(svc, user, api_key="sk-1")
    saved = await models.update_model(
        svc, user_id=user, model_id=made.id, name="Renamed", api_key=""
    )
    assert (saved.model.name, saved.model.api_key, saved.key_removed) == ("Renamed", "sk-1", False)
    await _refused(svc, engine, other_user, models.update_model, model_id=made.id, name="Theirs")
    before = _models(engine)
    with pytest.raises(ValidationFailed) as refused:
        await models.update_model(svc, user_id=user, model_id=made.id, base_url="nowhere")
    assert "base_url" in refused.value.field_errors
    for model_id in NOT_IDS:
        with pytest.raises(NotFound, match="does not exist"):
            await models.update_model(svc, user_id=user, model_id=model_id, name="X")
    assert _models(engine) == before
    # A new address without a new key: the stored key does not go with it.
    moved = await models.update_model(
        svc, user_id=user, model_id=made.id, base_url="http://elsewhere.test/v1"
    )
    assert moved.key_removed and moved.model.api_key is None


async def test_delete_model(svc, engine: Engine, user: int, other_user: int) -> None:
    first = await _model(svc, user, "First")
    await _model(svc, user, "Second")
    await _refused(svc, engine, other_user, models.delete_model, model_id=first.id)
    for model_id in NOT_IDS:
        with pytest.raises(NotFound, match="does not exist"):
            await models.delete_model(svc, user_id=user, model_id=model_id)
    await models.delete_model(svc, user_id=user, model_id=first.id)
    assert [(m[0], m[4]) for m in _models(engine)] == [("Second", True)]  # the next default


async def test_make_default(svc, engine: Engine, user: int, other_user: int) -> None:
    await _model(svc, user, "First")
    second = await _model(svc, user, "Second")
    await _refused(svc, engine, other_user, models.make_default, model_id=second.id)
    for model_id in NOT_IDS:
        with pytest.raises(NotFound, match="does not exist"):
            await models.make_default(svc, user_id=user, model_id=model_id)
    chosen = await models.make_default(svc, user_id=user, model_id=second.id)
    assert chosen.is_default
    assert [(m[0], m[4]) for m in _models(engine)] == [("First", False), ("Second", True)]


async def test_check_endpoint_sends_a_stored_key_only_to_its_url(
    svc, engine: Engine, user: int, other_user: int, probes: list[dict]
) -> None:
    made = await _model(svc, user, api_key="sk-secret")
    ok, said = await models.check_endpoint(
        svc, user_id=user, base_url=f" {URL}/ ", model_name=" m ", model_id=made.id
    )
    assert ok and said == "The endpoint answered."
    assert probes[-1] == {
        "base_url": f"{URL}/",
        "model_name": "m",
        "api_key": "sk-secret",
        "check_image": False,
    }
    await models.check_endpoint(
        svc, user_id=user, base_url=URL, model_name="m", model_id=made.id, check_image=True
    )
    assert probes[-1]["check_image"] is True and probes[-1]["api_key"] == "sk-secret"
    ok, said = await models.check_endpoint(
        svc, user_id=user, base_url="http://attacker.test/v1", model_name="m", model_id=made.id
    )
    assert probes[-1]["api_key"] == "" and said.endswith(models.KEY_NOT_SENT_NOTE)
    await models.check_endpoint(
        svc, user_id=user, base_url="http://other.test", model_name="m", api_key="sk-typed"
    )
    assert probes[-1]["api_key"] == "sk-typed"
    sent = len(probes)
    await _refused(
        svc, engine, other_user, models.check_endpoint, base_url=URL, model_name="m",
        model_id=made.id,
    )  # fmt: skip
    assert len(probes) == sent  # nothing was sent for them
    with pytest.raises(NotFound):
        await models.check_endpoint(svc, user_id=user, base_url=URL, model_name="m", model_id="1")


async def test_reads_images_is_saved_on_create_and_update(svc, user: int) -> None:
    """The "Reads images" box: stored on create, changed on update, kept when not given."""
    plain = await _model(svc, user, "Plain")
    seeing = await _model(svc, user, "Seeing", supports_images=True)
    assert (plain.supports_images, seeing.supports_images) == (False, True)
    on = await models.update_model(svc, user_id=user, model_id=plain.id, supports_images=True)
    assert on.model.supports_images
    kept = await models.update_model(svc, user_id=user, model_id=plain.id, name="Renamed")
    assert kept.model.supports_images
    off = await models.update_model(svc, user_id=user, model_id=seeing.id, supports_images=False)
    assert not off.model.supports_images
    listed = {m.name: m.supports_images for m in await models.list_models(svc)}
    assert listed == {"Renamed": True, "Seeing": False}
