"""Model endpoints: validation and the one-default rules."""

from __future__ import annotations

import dataclasses

import pytest
from sqlmodel import Session

from agent_chat.config import load_settings
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.model_configs import (
    create_model,
    delete_model,
    ensure_env_model,
    get_default_model,
    get_model,
    list_models,
    same_base_url,
    set_default_model,
    update_model,
)
from agent_chat.db.models import ModelConfig


def _model(session: Session, name: str, **kw) -> ModelConfig:
    return create_model(
        session=session,
        name=name,
        base_url=kw.pop("base_url", "http://127.0.0.1:8000/v1"),
        model_name=kw.pop("model_name", "qwen"),
        **kw,
    )


def _defaults(session: Session) -> list[str]:
    return [m.name for m in list_models(session=session) if m.is_default]


def test_the_first_model_becomes_the_default(session: Session) -> None:
    assert get_default_model(session=session) is None
    first = _model(session, "first")
    second = _model(session, "second")
    assert first.is_default and not second.is_default
    assert get_default_model(session=session).id == first.id
    assert [m.name for m in list_models(session=session)] == ["first", "second"]


def test_making_a_model_default_unsets_the_others(session: Session) -> None:
    _model(session, "a")
    b = _model(session, "b")
    _model(session, "c", is_default=True)
    assert _defaults(session) == ["c"]
    set_default_model(session=session, model_id=b.id)
    assert _defaults(session) == ["b"]
    with pytest.raises(NotFound):
        set_default_model(session=session, model_id=999_999)


def test_deleting_the_default_promotes_the_oldest_remaining(session: Session) -> None:
    a = _model(session, "a")
    _model(session, "b")
    _model(session, "c")
    delete_model(session=session, model_id=a.id)
    assert _defaults(session) == ["b"]
    c = next(m for m in list_models(session=session) if m.name == "c")
    delete_model(session=session, model_id=c.id)
    assert _defaults(session) == ["b"]
    with pytest.raises(NotFound):
        delete_model(session=session, model_id=999_999)


def test_deleting_the_last_model_leaves_no_default(session: Session) -> None:
    only = _model(session, "only")
    delete_model(session=session, model_id=only.id)
    assert get_default_model(session=session) is None
    assert get_model(session=session, model_id=only.id) is None


@pytest.mark.parametrize(
    ("fields", "bad_field"),
    [
        ({"name": "  "}, "name"),
        ({"base_url": "ftp://host/v1"}, "base_url"),
        ({"base_url": "localhost:8000"}, "base_url"),
        ({"base_url": "http://"}, "base_url"),
        ({"base_url": "http://host:99999/v1"}, "base_url"),
        ({"base_url": "http://host:port/v1"}, "base_url"),
        ({"base_url": "http://host:0/v1"}, "base_url"),
        ({"model_name": ""}, "model_name"),
        ({"context_length": 0}, "context_length"),
        ({"context_length": -5}, "context_length"),
    ],
)
def test_create_model_rejects_bad_fields(session: Session, fields: dict, bad_field: str) -> None:
    values = {"name": "m", "base_url": "https://api.example.com/v1", "model_name": "x"} | fields
    with pytest.raises(ValidationFailed) as caught:
        create_model(session=session, **values)
    assert list(caught.value.field_errors) == [bad_field]


def test_create_model_reports_every_bad_field_at_once(session: Session) -> None:
    with pytest.raises(ValidationFailed) as caught:
        create_model(session=session, name="", base_url="nope", model_name="")
    assert set(caught.value.field_errors) == {"name", "base_url", "model_name"}


def test_a_duplicate_name_is_a_field_error_on_name(session: Session) -> None:
    _model(session, "same")
    with pytest.raises(ValidationFailed) as caught:
        _model(session, " same ")
    assert "already exists" in caught.value.field_errors["name"]


def test_update_model_changes_fields_and_api_key_rules(session: Session) -> None:
    model = _model(session, "m", api_key="sk-1", context_length=8192)
    _model(session, "other")
    update_model(session=session, model_id=model.id, model_name="llama", api_key=None)
    assert (model.model_name, model.api_key) == ("llama", "sk-1")  # None keeps the key
    update_model(session=session, model_id=model.id, api_key="sk-2", context_length=None)
    assert (model.api_key, model.context_length) == ("sk-2", None)
    update_model(session=session, model_id=model.id, api_key="")
    assert model.api_key is None  # "" clears it
    update_model(session=session, model_id=model.id, name="m")  # its own name is no clash
    with pytest.raises(ValidationFailed) as caught:
        update_model(session=session, model_id=model.id, name="other", base_url="x")
    assert set(caught.value.field_errors) == {"name", "base_url"}
    with pytest.raises(NotFound):
        update_model(session=session, model_id=999_999, name="x")
    with pytest.raises(TypeError):
        update_model(session=session, model_id=model.id, colour="red")


# A key belongs to the address it was given for: an administrator's session must not be able
# to point a model at another server and have the stored key sent there.
OLD_URL = "https://api.example.com/v1"


def test_changing_the_base_url_clears_the_stored_key(session: Session) -> None:
    model = _model(session, "m", base_url=OLD_URL, api_key="sk-old")
    update_model(session=session, model_id=model.id, base_url="http://10.0.0.7:8080/v1")
    assert (model.base_url, model.api_key) == ("http://10.0.0.7:8080/v1", None)
    stored = get_model(session=session, model_id=model.id)
    assert stored.api_key is None


def test_an_explicit_api_key_none_does_not_keep_the_key_for_a_new_url(session: Session) -> None:
    model = _model(session, "m", base_url=OLD_URL, api_key="sk-old")
    update_model(session=session, model_id=model.id, base_url="https://evil.test/v1", api_key=None)
    assert model.api_key is None


def test_changing_the_base_url_with_a_new_key_keeps_the_new_key(session: Session) -> None:
    model = _model(session, "m", base_url=OLD_URL, api_key="sk-old")
    update_model(
        session=session,
        model_id=model.id,
        base_url="https://other.example.com/v1",
        api_key="sk-new",
    )
    assert (model.base_url, model.api_key) == ("https://other.example.com/v1", "sk-new")


def test_the_same_base_url_keeps_the_key(session: Session) -> None:
    model = _model(session, "m", base_url=OLD_URL, api_key="sk-old")
    update_model(session=session, model_id=model.id, base_url=OLD_URL, name="renamed")
    update_model(session=session, model_id=model.id, model_name="other-model")
    assert (model.name, model.api_key) == ("renamed", "sk-old")


@pytest.mark.parametrize(
    "spelling",
    [
        "  https://api.example.com/v1  ",  # whitespace around it
        "https://api.example.com/v1/",  # a trailing slash
        "https://api.example.com/v1//",
        "HTTPS://API.Example.COM/v1",  # scheme and host are case-insensitive
        "https://api.example.com:443/v1",  # the default port written out
    ],
)
def test_another_spelling_of_the_same_url_keeps_the_key(session: Session, spelling: str) -> None:
    model = _model(session, "m", base_url=OLD_URL, api_key="sk-old")
    update_model(session=session, model_id=model.id, base_url=spelling)
    assert model.api_key == "sk-old"
    assert model.base_url == spelling.strip()  # stored as typed (stripped), only compared loosely


@pytest.mark.parametrize(
    "other",
    [
        "http://api.example.com/v1",  # another scheme: the key would travel in clear
        "https://api.example.com:8443/v1",  # another port
        "https://api.example.com.evil.test/v1",  # another host
        "https://api.example.com/V1",  # paths are case-sensitive
        "https://api.example.com/v2",
        "https://api.example.com/v1?to=elsewhere",
        "https://user@api.example.com/v1",  # user info goes to the server too
    ],
)
def test_another_address_clears_the_key(session: Session, other: str) -> None:
    assert not same_base_url(OLD_URL, other)
    model = _model(session, "m", base_url=OLD_URL, api_key="sk-old")
    update_model(session=session, model_id=model.id, base_url=other)
    assert model.api_key is None


def test_a_refused_url_change_keeps_url_and_key(session: Session) -> None:
    model = _model(session, "m", base_url=OLD_URL, api_key="sk-old")
    with pytest.raises(ValidationFailed):
        update_model(session=session, model_id=model.id, base_url="ftp://elsewhere/v1")
    assert (model.base_url, model.api_key) == (OLD_URL, "sk-old")


def test_update_model_is_default_true_moves_the_default_false_is_ignored(
    session: Session,
) -> None:
    a = _model(session, "a")
    b = _model(session, "b")
    update_model(session=session, model_id=b.id, is_default=True)
    assert _defaults(session) == ["b"]
    update_model(session=session, model_id=b.id, is_default=False)
    assert _defaults(session) == ["b"]
    assert not a.is_default


def _settings(**env: object):
    return dataclasses.replace(load_settings(), **env)


def test_ensure_env_model_seeds_a_default_only_into_an_empty_table(session: Session) -> None:
    settings = _settings(
        env_model_base_url="http://127.0.0.1:9000/v1",
        env_model_name="qwen3",
        env_model_api_key="sk-env",
        env_model_context_length=32768,
    )
    model = ensure_env_model(session=session, settings=settings)
    assert (
        model.name,
        model.model_name,
        model.api_key,
        model.context_length,
        model.is_default,
    ) == (
        "Default",
        "qwen3",
        "sk-env",
        32768,
        True,
    )
    assert ensure_env_model(session=session, settings=settings) is None
    assert len(list_models(session=session)) == 1


def test_ensure_env_model_does_nothing_without_settings_or_with_bad_ones(
    session: Session,
) -> None:
    unset = _settings(env_model_base_url=None, env_model_name=None)
    assert ensure_env_model(session=session, settings=unset) is None
    bad = _settings(env_model_base_url="not a url", env_model_name="x")
    assert ensure_env_model(session=session, settings=bad) is None
    assert list_models(session=session) == []
