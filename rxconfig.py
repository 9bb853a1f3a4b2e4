"""Reflex configuration. Our own settings come from agent_chat.config (the environment)."""

import reflex as rx
from reflex.plugins.sitemap import SitemapPlugin

from agent_chat.config import load_settings

_settings = load_settings()

config = rx.Config(
    app_name="agent_chat",
    db_url=_settings.db_url,
    telemetry_enabled=False,
    show_built_with_reflex=False,
    backend_host=_settings.app_host,
    plugins=[
        rx.plugins.RadixThemesPlugin(
            theme=rx.theme(accent_color="violet", gray_color="slate", radius="large")
        ),
    ],
    disable_plugins=[SitemapPlugin],
)
