"""The plain-Python parts of the tool views and the workspace panel never import Reflex
(the contract in pyproject.toml lists the older plain layers; these are checked here)."""

from __future__ import annotations

import grimp
import pytest

PLAIN = [
    "agent_chat.live.tool_views",
    "agent_chat.live.diff_lines",
    "agent_chat.live.cut_json",
    "agent_chat.live.highlight",
    "agent_chat.workspaces",
    "agent_chat.workspace_view",
    "agent_chat.workspace_http",
]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("agent_chat", "reflex", cache_dir=None)


@pytest.mark.parametrize("module", PLAIN)
def test_no_reflex_below_the_line(graph: grimp.ImportGraph, module: str) -> None:
    chain = graph.find_shortest_chain(importer=module, imported="reflex")
    assert chain is None, f"{module} reaches reflex: {' -> '.join(chain)}"
