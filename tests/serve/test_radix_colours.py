"""The built stylesheet holds the Radix colour scales the app uses, and only those.

rxconfig.py imports Radix Themes' parts instead of its whole `styles.css` (31 colour scales,
722 kB in the head before the first paint). A colour named in a page but not imported draws
nothing (a badge with no background, an error in the text colour); the whole file coming
back (a Reflex upgrade, the plugin replaced) makes the page that much slower to paint.
"""

from __future__ import annotations

import os
import re

from tests.support.builds import client_build
from tests.support.processes import ROOT

SCALES = [
    "gray",
    "mauve",
    "slate",
    "sage",
    "olive",
    "sand",
    "amber",
    "blue",
    "bronze",
    "brown",
    "crimson",
    "cyan",
    "gold",
    "grass",
    "green",
    "indigo",
    "iris",
    "jade",
    "lime",
    "mint",
    "orange",
    "pink",
    "plum",
    "purple",
    "red",
    "ruby",
    "sky",
    "teal",
    "tomato",
    "violet",
    "yellow",
]
_NAMES = "|".join(SCALES)
# A colour as the pages name it: color_scheme="red", accent_color="violet", a dict of them,
# rx.cond(..., "gray", "orange"); and as the stylesheets and scripts do: var(--red-11).
_QUOTED = re.compile(rf"""["']({_NAMES})["']""")
_VARIABLE = re.compile(rf"--({_NAMES})-a?\d+\b")
# The terminal client's colours are Rich's, not Radix's.
_NOT_PAGES = ("agent_chat/cli/",)


def _used_colours() -> dict[str, str]:
    """Each colour the app's pages name, with one file that names it."""
    used: dict[str, str] = {}
    files = [*ROOT.glob("agent_chat/**/*.py"), ROOT / "rxconfig.py"]
    files += [p for ext in ("css", "jsx", "js") for p in ROOT.glob(f"assets/**/*.{ext}")]
    for path in files:
        name = str(path.relative_to(ROOT))
        if name.startswith(_NOT_PAGES):
            continue
        text = path.read_text(encoding="utf-8")
        # The list of scales to build is what this test checks, not a use.
        text = re.sub(r"RADIX_COLOURS = \([^)]*\)", "", text)
        for colour in {*_VARIABLE.findall(text), *_QUOTED.findall(text)}:
            used.setdefault(colour, name)
    return used


def _defined_scales(css: str) -> set[str]:
    """The colour scales a stylesheet defines (`--violet-9: ...`)."""
    return set(re.findall(rf"--({_NAMES})-9\s*:", css)) & set(SCALES)


def _built_css() -> str:
    assets = client_build(dict(os.environ)) / "assets"
    sheets = sorted(assets.glob("*.css"))
    assert sheets, f"no stylesheet in {assets}"
    return "\n".join(p.read_text(encoding="utf-8") for p in sheets)


def test_the_scan_finds_the_colours_of_the_pages() -> None:
    """The scan itself: the theme's accent and gray, a color_scheme, a stylesheet's var."""
    used = _used_colours()
    assert {"violet", "slate", "red", "gray", "cyan"} <= used.keys()
    assert "yellow" not in used  # only the terminal client's (Rich)


def test_the_built_css_has_every_colour_the_app_uses_and_no_other() -> None:
    used = _used_colours()
    defined = _defined_scales(_built_css())
    missing = {colour: where for colour, where in used.items() if colour not in defined}
    assert not missing, f"colour scales not in the built CSS (add them to rxconfig.py): {missing}"
    unused = defined - used.keys() - {"gray"}
    assert not unused, f"scales no page uses are built in (the whole styles.css?): {unused}"
    assert len(defined) < len(SCALES)
