"""What the pages bundle: nothing that makes a conversation open slower for no use."""

from __future__ import annotations

import agent_chat.agent_chat as app_module


def test_no_page_names_an_icon_at_run_time() -> None:
    """`rx.icon(<a var>)` compiles to lucide's DynamicIcon, which imports a map of all ~2,000
    icons (250 kB of the chat page's script, 3,000 files in the build): draw a fixed set of
    static icons instead (rx.cond / rx.match)."""
    pages = app_module.app._unevaluated_pages
    assert pages, "no page registered"
    for route, page in pages.items():
        imports = page.component()._get_all_imports()
        tags = {str(i.tag) for lib, items in imports.items() if "lucide" in lib for i in items}
        assert "DynamicIcon" not in tags, route
