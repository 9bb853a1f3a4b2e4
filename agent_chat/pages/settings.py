"""`/settings/models`: the model endpoints the agent can use."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.bridges import bridges_section
from agent_chat.components.common import tid
from agent_chat.components.hosting import hosting_section
from agent_chat.components.layout import app_frame
from agent_chat.components.settings_nav import settings_nav
from agent_chat.components.settings_sections import always_allowed_section, notifications_section
from agent_chat.components.share import shared_links_section
from agent_chat.display.rows import ModelRow
from agent_chat.state.models import API_KEY_INPUT_ID, KEY_NOT_SENT, ModelsState

# The prerendered page shows the form before its scripts run; what is typed then never
# reaches the state (the save would say "A name is required." under a filled name), so
# the fields wait for the page to be live.
NOT_LIVE = ~rx.State.is_hydrated


def _model_card(row: ModelRow) -> rx.Component:
    return rx.card(
        rx.hstack(
            rx.vstack(
                rx.hstack(
                    rx.text(row["name"], weight="bold"),
                    rx.cond(
                        row["is_default"],
                        rx.badge(
                            "default", color_scheme="green", custom_attrs=tid("model-default-badge")
                        ),
                    ),
                    rx.cond(
                        row["supports_images"],
                        rx.badge(
                            "images",
                            color_scheme="blue",
                            title="Attached images are sent to this model",
                            custom_attrs=tid("model-images-badge"),
                        ),
                    ),
                    align="center",
                ),
                rx.text(
                    row["model_name"],
                    " · ",
                    row["base_url"],
                    rx.cond(
                        (row["price_input"] != "") | (row["price_output"] != ""),
                        rx.text.span(
                            " · $",
                            rx.cond(row["price_input"] != "", row["price_input"], "0"),
                            " in / $",
                            rx.cond(row["price_output"] != "", row["price_output"], "0"),
                            " out per 1M tokens",
                        ),
                    ),
                    size="1",
                    color_scheme="gray",
                ),
                spacing="1",
                flex="1",
                min_width="0",
            ),
            rx.cond(
                ModelsState.can_manage,
                rx.hstack(
                    rx.cond(
                        ~row["is_default"],
                        rx.button(
                            "Make default",
                            size="1",
                            variant="soft",
                            on_click=ModelsState.make_default(row["id"]),
                        ),
                    ),
                    rx.button(
                        "Edit", size="1", variant="soft", on_click=ModelsState.edit(row["id"])
                    ),
                    rx.button(
                        "Delete",
                        size="1",
                        variant="soft",
                        color_scheme="red",
                        on_click=ModelsState.delete(row["id"]),
                    ),
                    spacing="2",
                    align="center",
                ),
            ),
            align="center",
            width="100%",
        ),
        width="100%",
        custom_attrs={"data-testid": "model-card", "data-model-id": row["id"]},
    )


def _field(
    label: str, name: str, test_id: str, placeholder: str = "", kind: str = "text", hint: str = ""
) -> rx.Component:
    error = ModelsState.field_errors.get(name, "")
    if name == "api_key":  # uncontrolled: the key never travels back to the browser
        box = rx.input(
            id=API_KEY_INPUT_ID,
            on_change=ModelsState.set_api_key,
            placeholder=placeholder,
            type=kind,
            auto_complete="off",
            disabled=NOT_LIVE,
            width="100%",
            custom_attrs=tid(test_id),
        )
    else:
        box = rx.input(
            value=ModelsState.form.get(name, ""),
            on_change=lambda v: ModelsState.set_field(name, v),
            placeholder=placeholder,
            type=kind,
            disabled=NOT_LIVE,
            width="100%",
            custom_attrs=tid(test_id),
        )
    return rx.vstack(
        rx.text(label, size="2", weight="medium"),
        box,
        rx.cond(
            error != "",
            rx.text(
                error,
                size="1",
                color_scheme="red",
                custom_attrs={"data-testid": f"{test_id}-error"},
            ),
            rx.cond(hint != "", rx.text(hint, size="1", color_scheme="gray")),
        ),
        spacing="1",
        width="100%",
    )


def _form() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading(rx.cond(ModelsState.editing_id == 0, "Add a model", "Edit model"), size="4"),
            _field("Name", "name", "model-name", "e.g. Local Qwen"),
            _field(
                "Base URL",
                "base_url",
                "model-base-url",
                "https://api.example.com/v1",
                hint="OpenAI-compatible, usually ends in /v1",
            ),
            _field("Model id", "model_name", "model-id", "e.g. gpt-4o-mini"),
            _field(
                "API key",
                "api_key",
                "model-api-key",
                "sk-…",
                kind="password",
                hint=rx.cond(
                    ModelsState.editing_id == 0,
                    "Optional for local servers",
                    rx.cond(ModelsState.url_moved, "", "Leave empty to keep the stored key"),
                ),
            ),
            rx.cond(
                ModelsState.url_moved,
                rx.text(
                    KEY_NOT_SENT,
                    size="1",
                    color_scheme="amber",
                    custom_attrs=tid("model-api-key-notice"),
                ),
            ),
            _field(
                "Context length (tokens)",
                "context_length",
                "model-context-length",
                "optional, e.g. 131072",
            ),
            rx.hstack(
                _field(
                    "Price per 1M input tokens (USD)",
                    "price_input",
                    "model-price-input",
                    "optional, e.g. 0.15",
                ),
                _field(
                    "Price per 1M output tokens (USD)",
                    "price_output",
                    "model-price-output",
                    "optional, e.g. 0.60",
                ),
                width="100%",
                spacing="3",
            ),
            rx.checkbox(
                "Use as the default model",
                checked=ModelsState.form_default,
                on_change=ModelsState.set_form_default,
                disabled=NOT_LIVE,
                custom_attrs=tid("model-default"),
            ),
            rx.vstack(
                rx.checkbox(
                    "Reads images",
                    checked=ModelsState.form_images,
                    on_change=ModelsState.set_form_images,
                    disabled=NOT_LIVE,
                    custom_attrs=tid("model-supports-images"),
                ),
                rx.text(
                    "Attached images are sent to it; otherwise the agent gets a note naming "
                    "the image. Test connection then checks that the endpoint takes one.",
                    size="1",
                    color_scheme="gray",
                ),
                spacing="1",
            ),
            rx.hstack(
                rx.button(
                    "Save",
                    on_click=ModelsState.save,
                    disabled=NOT_LIVE,
                    custom_attrs=tid("model-save"),
                ),
                rx.button(
                    "Test connection",
                    variant="soft",
                    loading=ModelsState.testing,
                    disabled=NOT_LIVE,
                    on_click=ModelsState.test,
                    custom_attrs=tid("model-test"),
                ),
                rx.cond(
                    ModelsState.editing_id != 0,
                    rx.button("New model", variant="ghost", on_click=ModelsState.new),
                ),
                spacing="2",
            ),
            rx.cond(
                ModelsState.form_message != "",
                rx.text(ModelsState.form_message, size="2", custom_attrs=tid("model-form-message")),
            ),
            rx.cond(
                ModelsState.test_result != "",
                rx.text(
                    ModelsState.test_result,
                    size="2",
                    color_scheme=rx.cond(ModelsState.test_ok, "green", "red"),
                    custom_attrs=tid("model-test-result"),
                ),
            ),
            spacing="3",
            width="100%",
        ),
        width="100%",
    )


def models_page() -> rx.Component:
    return app_frame(
        rx.scroll_area(
            rx.vstack(
                settings_nav(routes.SETTINGS_MODELS),
                rx.heading("Models", size="6"),
                rx.text(
                    "OpenAI-compatible endpoints Hermes can use. API keys stay on the server.",
                    rx.cond(
                        ModelsState.can_manage,
                        "",
                        " Administrators add and change them; choose one in the composer.",
                    ),
                    color_scheme="gray",
                    custom_attrs=tid("models-intro"),
                ),
                rx.foreach(ModelsState.models, _model_card),
                rx.cond(
                    ModelsState.models.length() == 0,
                    rx.text(
                        rx.cond(
                            ModelsState.can_manage,
                            "No model yet: add one below.",
                            "No model yet: ask an administrator to add one.",
                        ),
                        color_scheme="gray",
                    ),
                ),
                rx.cond(ModelsState.can_manage, _form()),
                always_allowed_section(),
                notifications_section(),
                shared_links_section(),
                hosting_section(),
                bridges_section(),
                rx.link(
                    "API tokens (HTTP API, command line) →",
                    href=routes.SETTINGS_TOKENS,
                    custom_attrs=tid("tokens-link"),
                ),
                class_name="settings-column",
                spacing="4",
            ),
            flex="1",
        ),
    )
