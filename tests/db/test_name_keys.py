"""One meaning of "the same name" on both databases: every unique name (a
person's folders, models, usernames) is compared by `names.name_key`, computed in Python; a
duplicate is the store's `ValidationFailed` on the field, whether the check before the
insert finds it or the unique constraint does (a race), never an `IntegrityError`."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from agent_chat.db import folders, model_configs, users
from agent_chat.db.engine import open_session
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.names import name_key
from tests.support.users import make_user

# (stored first, then refused as the same name): a non-ASCII capital, a combining mark
# (decomposed) against the precomposed letter, full-width letters against ASCII ones.
SAME_NAMES = [
    pytest.param("Écrits", "écrits", id="non-ascii-capital"),
    pytest.param("écrits", "e\u0301crits", id="combining-mark"),
    pytest.param("abc", "ＡＢＣ", id="full-width"),
]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Écrits", "écrits"),
        ("e\u0301crits", "écrits"),
        ("ＡＢＣ", "abc"),
        ("Straße", "STRASSE"),
        ("Ecr\u00adits", "ecrits"),  # a soft hyphen is invisible
        ("  a\u3000\u00a0b ", "a b"),  # ideographic and no-break spaces
        ("\u212aelvin", "kelvin"),  # the Kelvin sign
    ],
)
def test_names_a_person_calls_the_same_share_a_key(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize(("a", "b"), [("Écrits", "Ecrits"), ("a b", "ab"), ("1", "١")])
def test_other_names_keep_other_keys(a: str, b: str) -> None:
    assert name_key(a) != name_key(b)


# --- folders (unique per owner) -----------------------------------------------------------


@pytest.mark.parametrize(("first", "second"), SAME_NAMES)
def test_a_folder_name_is_taken_by_its_key(
    session: Session, user: int, other_user: int, first: str, second: str
) -> None:
    folder = folders.create_folder(session=session, user_id=user, name=first)
    with pytest.raises(ValidationFailed) as refused:
        folders.create_folder(session=session, user_id=user, name=second)
    assert refused.value.field_errors == {"name": f"A folder named “{second}” already exists."}
    other = folders.create_folder(session=session, user_id=user, name="Other")
    with pytest.raises(ValidationFailed, match="already exists"):
        folders.rename_folder(session=session, user_id=user, folder_id=other.id, name=second)
    # Its own name in another spelling is a rename; another person has their own names.
    folders.rename_folder(session=session, user_id=user, folder_id=folder.id, name=second)
    folders.create_folder(session=session, user_id=other_user, name=first)
    listed = [f.name for f in folders.list_folders(session=session, user_id=user)]
    assert listed == sorted(["Other", second], key=name_key)  # by key: case aside


@pytest.mark.parametrize(("first", "second"), SAME_NAMES)
def test_a_folder_name_taken_in_a_race_is_the_same_field_error(
    engine: Engine, user: int, monkeypatch: pytest.MonkeyPatch, first: str, second: str
) -> None:
    with open_session(engine) as session:
        folders.create_folder(session=session, user_id=user, name=first)
    # The other request's insert committed after this one's check: the constraint answers.
    monkeypatch.setattr(folders, "_check_unique", lambda *args, **kwargs: None)
    with pytest.raises(ValidationFailed) as refused, open_session(engine) as session:
        folders.create_folder(session=session, user_id=user, name=second)
    assert isinstance(refused.value.__cause__, IntegrityError)
    assert refused.value.field_errors == {"name": f"A folder named “{second}” already exists."}
    with pytest.raises(ValidationFailed, match="already exists"), open_session(engine) as session:
        folder = folders.create_folder(session=session, user_id=user, name="Another")
        folders.rename_folder(session=session, user_id=user, folder_id=folder.id, name=second)
    with open_session(engine) as session:  # both rolled back; the database goes on
        assert [f.name for f in folders.list_folders(session=session, user_id=user)] == [first]


def test_another_integrity_error_is_not_taken_for_a_duplicate_name(engine: Engine) -> None:
    # No such owner: the foreign key refuses it, which is no name's fault.
    with pytest.raises(IntegrityError), open_session(engine) as session:
        folders.create_folder(session=session, user_id=987654, name="Orphan")


# --- models (unique in the whole table) -----------------------------------------------------


def _model(session: Session, name: str) -> int:
    model = model_configs.create_model(
        session=session, name=name, base_url="http://localhost:1/v1", model_name="m"
    )
    assert model.id is not None
    return model.id


@pytest.mark.parametrize(("first", "second"), SAME_NAMES)
def test_a_model_name_is_taken_by_its_key(session: Session, first: str, second: str) -> None:
    model_id = _model(session, first)
    with pytest.raises(ValidationFailed) as refused:
        _model(session, second)
    assert refused.value.field_errors == {"name": f"A model named {second!r} already exists."}
    other = _model(session, "Other")
    with pytest.raises(ValidationFailed, match="already exists"):
        model_configs.update_model(session=session, model_id=other, name=second)
    model_configs.update_model(session=session, model_id=model_id, name=second)  # itself
    assert [m.name for m in model_configs.list_models(session=session)] == [second, "Other"]


@pytest.mark.parametrize(("first", "second"), SAME_NAMES)
def test_a_model_name_taken_in_a_race_is_the_same_field_error(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, first: str, second: str
) -> None:
    with open_session(engine) as session:
        _model(session, first)
    monkeypatch.setattr(model_configs, "_validate", lambda *args, **kwargs: None)
    with pytest.raises(ValidationFailed) as refused, open_session(engine) as session:
        _model(session, second)
    assert isinstance(refused.value.__cause__, IntegrityError)
    assert refused.value.field_errors == {"name": f"A model named {second!r} already exists."}
    with pytest.raises(ValidationFailed, match="already exists"), open_session(engine) as session:
        other = _model(session, "Other")
        model_configs.update_model(session=session, model_id=other, name=second)
    with open_session(engine) as session:
        assert [m.name for m in model_configs.list_models(session=session)] == [first]


# --- usernames (stored as their key) --------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"), [("carol", "ＣＡＲＯＬ"), ("kim", "\u212aIM"), ("Dave", "dave")]
)
def test_a_username_is_stored_as_its_key_and_taken_by_it(
    session: Session, first: str, second: str
) -> None:
    user_id = make_user(session, first)
    assert users.get_user(session=session, user_id=user_id).username == name_key(first)
    with pytest.raises(ValidationFailed) as refused:
        make_user(session, second)
    assert refused.value.field_errors == {"username": "That username is taken."}
    found = users.find_user(session=session, username=second)
    assert found is not None and found.id == user_id


@pytest.mark.parametrize("name", ["Écrits", "e\u0301crits", "ＡＢＣ "])
def test_a_username_outside_ascii_letters_is_refused_or_folded_to_them(
    session: Session, name: str
) -> None:
    if name_key(name).isascii():
        assert make_user(session, name) > 0  # ＡＢＣ is abc
        return
    with pytest.raises(ValidationFailed) as refused:
        make_user(session, name)
    assert set(refused.value.field_errors) == {"username"}


def test_a_username_taken_in_a_race_is_the_same_field_error(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_session(engine) as session:
        make_user(session, "erin")
    monkeypatch.setattr(users, "find_user", lambda **kwargs: None)
    with pytest.raises(ValidationFailed) as refused, open_session(engine) as session:
        make_user(session, "ＥＲＩＮ")
    assert isinstance(refused.value.__cause__, IntegrityError)
    assert refused.value.field_errors == {"username": "That username is taken."}
