"""The model settings page: add, edit, delete, choose the default, test an endpoint.

Administrators only: every handler that changes or probes a model asks who sent the event
(the session read now, then `services/models.py:require_admin`) and refuses anyone else
with the banner, and the use case checks again; members get the read-only list
(`can_manage` only decides what the page shows). Choosing a model for a conversation (the
composer) is not here and stays open to everyone.

A stored API key stays with its base URL: editing the URL clears the key on save unless a new
one is typed (`model_configs.update_model`), the form says so under the key field, and the
test button sends the stored key only to the stored URL.
"""

from __future__ import annotations

import reflex as rx

from agent_chat.db.errors import Forbidden, StoreError, ValidationFailed
from agent_chat.display.rows import ModelRow, model_row
from agent_chat.services import models as model_service
from agent_chat.services.models import ADMINS_ONLY
from agent_chat.state.base import AppState

FIELDS = ("name", "base_url", "model_name", "context_length", "price_input", "price_output")
API_KEY_INPUT_ID = "model-api-key-input"
KEY_NOT_SENT = (
    "The base URL changed: enter the API key again; the stored key is not sent to a new address."
)


class ModelsState(AppState):
    models: list[ModelRow] = []
    editing_id: int = 0  # 0: the form adds a new model
    form: dict[str, str] = {}
    form_default: bool = False
    form_images: bool = False  # "Reads images": attached images go to it as image parts
    field_errors: dict[str, str] = {}
    form_message: str = ""
    test_result: str = ""
    test_ok: bool = False
    testing: bool = False
    url_moved: bool = False  # the form's base URL is not the edited model's, which has a key
    can_manage: bool = False  # what the page shows; every change is checked on the server

    async def _admin(self, *, say: bool = True) -> int | None:
        """The sender's id when they are an administrator now; otherwise None, the page
        turns read-only and (`say`) the banner says why."""
        me = await self.signed_in(fresh=True)  # a revoked session is refused at once too
        actor_id = me.user_id if me is not None else None
        try:
            await model_service.require_admin(self.svc(), user_id=actor_id)
        except Forbidden:
            self.can_manage = False
            if say:
                self.show_error(ADMINS_ONLY)
            return None
        self.can_manage = True
        return actor_id

    async def _reload(self) -> None:
        self.models = [model_row(m) for m in await model_service.list_models(self.svc())]
        self._track_url()

    def _track_url(self) -> None:
        row = next((m for m in self.models if m["id"] == self.editing_id), None)
        typed = str(self.form.get("base_url") or "")
        self.url_moved = bool(
            row and row["has_key"] and not model_service.same_base_url(row["base_url"], typed)
        )

    @rx.event
    async def load(self) -> None:
        self.field_errors, self.form_message, self.test_result = {}, "", ""
        await self._admin(say=False)
        await self._reload()

    # The key typed in the form lives only on the server (a backend var) and its input is
    # uncontrolled: no state update ever carries an API key to the browser.
    _api_key: str = ""

    @rx.event
    def set_api_key(self, value: str) -> None:
        self._api_key = value

    @rx.event
    def edit(self, model_id: int):
        self.editing_id = model_id
        self._api_key = ""
        self.field_errors, self.form_message, self.test_result = {}, "", ""
        row = next((m for m in self.models if m["id"] == model_id), None)
        # The stored API key is never sent back: an empty field keeps it.
        self.form = {f: str(row[f]) if row and f in row else "" for f in FIELDS}
        self.form_default = bool(row and row["is_default"])
        self.form_images = bool(row and row["supports_images"])
        self._track_url()
        return rx.set_value(API_KEY_INPUT_ID, "")

    @rx.event
    def set_field(self, name: str, value: str) -> None:
        self.form = {**self.form, name: value}
        self.field_errors = {k: v for k, v in self.field_errors.items() if k != name}
        if name == "base_url":
            self._track_url()

    @rx.event
    def set_form_default(self, value: bool) -> None:
        self.form_default = value

    @rx.event
    def set_form_images(self, value: bool) -> None:
        self.form_images = value

    @rx.event
    def new(self):
        return self.edit(0)

    @staticmethod
    def _fields(form: dict) -> dict:
        raw_length = str(form.get("context_length") or "").strip()
        fields: dict = {
            "name": str(form.get("name") or "").strip(),
            "base_url": str(form.get("base_url") or "").strip(),
            "model_name": str(form.get("model_name") or "").strip(),
            "is_default": bool(form.get("is_default")),
            "supports_images": bool(form.get("supports_images")),
        }
        if raw_length and not raw_length.isdigit():
            raise ValidationFailed(
                {"context_length": "Enter a whole number of tokens, or leave it empty."}
            )
        fields["context_length"] = int(raw_length) if raw_length else None
        for name in ("price_input", "price_output"):
            raw = str(form.get(name) or "").strip().lstrip("$")
            try:
                fields[name] = float(raw) if raw else None
            except ValueError:
                raise ValidationFailed(
                    {name: "Enter dollars per million tokens (e.g. 0.15), or leave it empty."}
                ) from None
        return fields

    @rx.event
    async def save(self):
        actor_id = await self._admin()
        if actor_id is None:
            return None
        form = {
            **self.form,
            "is_default": self.form_default,
            "supports_images": self.form_images,
        }
        self.field_errors, self.form_message = {}, ""
        api_key = self._api_key
        try:
            fields = self._fields(form)
            if self.editing_id:
                # An empty key field on edit keeps the stored key (it is never sent back),
                # unless the base URL changed: then the store clears it.
                saved = await model_service.update_model(
                    self.svc(),
                    user_id=actor_id,
                    model_id=self.editing_id,
                    api_key=api_key,
                    **fields,
                )
                self.form_message = f"Saved {fields['name']}."
                if saved.key_removed:
                    self.form_message += (
                        " Its base URL changed, so the stored API key was removed: enter it "
                        "again if the endpoint needs one."
                    )
            else:
                await model_service.create_model(
                    self.svc(), user_id=actor_id, api_key=api_key, **fields
                )
                self.edit(0)
                self.form_message = f"Added {fields['name']}."
        except ValidationFailed as exc:
            self.field_errors = exc.field_errors
            return None
        except StoreError as exc:
            self.form_message = f"Could not save: {exc}"
            return None
        await self._reload()
        self._api_key = ""  # stored; the field empties (an empty field keeps the stored key)
        return rx.set_value(API_KEY_INPUT_ID, "")

    @rx.event
    async def delete(self, model_id: int):
        actor_id = await self._admin()
        if actor_id is None:
            return None
        try:
            await model_service.delete_model(self.svc(), user_id=actor_id, model_id=model_id)
        except StoreError as exc:
            self.form_message = f"Could not delete: {exc}"
        await self._reload()
        return self.edit(0) if self.editing_id == model_id else None

    @rx.event
    async def make_default(self, model_id: int) -> None:
        actor_id = await self._admin()
        if actor_id is None:
            return
        try:
            await model_service.make_default(self.svc(), user_id=actor_id, model_id=model_id)
        except StoreError as exc:
            self.form_message = f"Could not make it the default: {exc}"
        await self._reload()

    @rx.event
    async def test(self):
        """Check the endpoint in the form with the typed key, or with the stored key when the
        field is empty and the form's base URL is the stored one (never another address);
        with "Reads images" ticked, whether it takes an image part too."""
        actor_id = await self._admin()
        if actor_id is None:
            return
        self.testing, self.test_result = True, ""
        yield
        try:
            ok, message = await model_service.check_endpoint(
                self.svc(),
                user_id=actor_id,
                base_url=str(self.form.get("base_url") or ""),
                model_name=str(self.form.get("model_name") or ""),
                api_key=self._api_key,
                model_id=self.editing_id,
                check_image=self.form_images,
            )
        except StoreError as exc:  # demoted meanwhile
            ok, message = False, str(exc)
        self.testing, self.test_ok, self.test_result = False, ok, message
