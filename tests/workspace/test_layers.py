"""The plain-Python parts of the tool views and the workspace panel never import Reflex
(the contract in pyproject.toml lists the older plain layers; these are checked here)."""

from __future__ import annotations

import grimp
import pytest

PLAIN = [
    "agent_chat.display.tool_views",
    "agent_chat.display.diff_lines",
    "agent_chat.display.cut_json",
    "agent_chat.display.highlight",
    "agent_chat.common.workspaces",
    "agent_chat.display.workspace_view",
    "agent_chat.api.workspace_files",
]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("agent_chat", "reflex", cache_dir=None)


@pytest.mark.parametrize("module", PLAIN)
def test_no_reflex_below_the_line(graph: grimp.ImportGraph, module: str) -> None:
    chain = graph.find_shortest_chain(importer=module, imported="reflex")
    assert chain is None, f"{module} reaches reflex: {' -> '.join(chain)}"
