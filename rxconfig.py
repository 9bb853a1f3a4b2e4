"""Reflex configuration. Our own settings come from agent_chat.config (the environment)."""

import dataclasses
from typing import Any

import reflex as rx
from reflex.plugins.sitemap import SitemapPlugin

from agent_chat.config import load_settings

_settings = load_settings()

# The Radix colour scales the app names: the theme's accent and gray, every `color_scheme`
# of the pages and the `var(--<colour>-N)` of assets/*.css. Another colour must be added here
# (tests/serve/test_radix_colours.py fails without it: a missing scale draws no colour at all).
RADIX_COLOURS = (
    "gray",
    "slate",
    "violet",
    "amber",
    "blue",
    "cyan",
    "green",
    "iris",
    "orange",
    "red",
)


@dataclasses.dataclass
class RadixThemesSomeColours(rx.plugins.RadixThemesPlugin):
    """Radix Themes with only the colour scales the app uses. Reflex's plugin imports
    `@radix-ui/themes/styles.css`, all 31 scales (722 kB, a stylesheet in the head that
    blocks the first paint); the package ships its parts separately, in that file's order:
    the scales, `tokens/base.css` (theme variables, every accent's mapping), the components
    and the utility classes."""

    colours: tuple[str, ...] = RADIX_COLOURS

    def get_stylesheet_paths(self, **context: Any) -> tuple[str, ...]:
        if not self.enabled:
            return ()
        package = "@radix-ui/themes"
        return (
            *(f"{package}/tokens/colors/{colour}.css" for colour in self.colours),
            f"{package}/tokens/base.css",
            f"{package}/components.css",
            f"{package}/utilities.css",
        )


config = rx.Config(
    app_name="agent_chat",
    # No `db_url`: the app owns its database (agent_chat.db.engine makes the engine from
    # AGENT_CHAT_DB_URL and migrates it when services start; tests/db checks that the models
    # and migrations agree). Given a db_url, Reflex would check the schema itself before every
    # start, run alembic/env.py outside the app and tell you to "Run reflex db migrate"
    # moments before the app migrates. Nothing uses rx.Model, rx.session() or `reflex db`.
    telemetry_enabled=False,
    show_built_with_reflex=False,
    backend_host=_settings.app_host,
    # No cross-origin access at all: the page is served by the app itself (same origin, also
    # behind a proxy), so no credentialed CORS for anyone, and Socket.IO's own origin check is
    # off because agent_chat/auth/origins.py checks Host and Origin on every way in. Reflex's
    # default, "*", let any web page read the API and drive the websocket.
    cors_allowed_origins=[],
    plugins=[
        RadixThemesSomeColours(
            theme=rx.theme(accent_color="violet", gray_color="slate", radius="large")
        ),
    ],
    disable_plugins=[SitemapPlugin],
    # Brotli first for the browsers that take it (all current ones): the bundle's 1.4 MB of
    # JS and 0.7 MB of CSS go out smaller than gzip; gzip stays for the others.
    frontend_compression_formats=["brotli", "gzip"],
)
