"""Building a hermes AIAgent for one person's session (hermes is imported here, lazily)."""

from __future__ import annotations

import logging
import os
from typing import Any

from agent_chat.bridge import homes
from agent_chat.bridge.schemas import McpServerSpec, ModelSpec
from agent_chat.bridge.settings import BridgeSettings

logger = logging.getLogger(__name__)

# hermes needs a non-empty key even for endpoints that ignore it.
PLACEHOLDER_API_KEY = "agent-chat-no-key"


_ssl_checked = False


def check_ssl_once() -> None:
    """hermes checks the CA bundle on every agent it builds (~0.4 s: it loads the bundle
    several times). Check once per bridge process, loudly, then skip it for each agent."""
    global _ssl_checked
    if _ssl_checked:
        return
    from agent.ssl_guard import verify_ca_bundle

    verify_ca_bundle()  # raises hermes' own readable error for a broken bundle
    os.environ["HERMES_SKIP_SSL_GUARD"] = "1"
    _ssl_checked = True


def build_agent(
    settings: BridgeSettings,
    user_id: int | None,
    session_id: str,
    model: ModelSpec,
    profile: str = "chat",
    mcp: tuple[McpServerSpec, ...] = (),
) -> Any:
    """A quiet AIAgent with the profile's toolset allowlist and the toolsets of the MCP
    servers it may use, built in the person's hermes home (their memory goes into its system
    prompt; None: the shared home, the warm-up's); callbacks are attached per run. Servers
    that could not be connected are in `agent.agent_chat_mcp_problems` (name → why)."""
    if user_id is None:
        return _build(settings, session_id, model, profile, mcp)
    with homes.entered(settings.hermes_home, user_id) as home:
        agent = _build(settings, session_id, model, profile, mcp)
        _own_session_db(agent, home)
        return agent


def _own_session_db(agent: Any, home: Any) -> None:
    """hermes' `session_search` (only with an operator's AGENT_CHAT_TOOLSETS) would open the
    state.db fixed at import, the shared one, and store every turn there: give it the
    person's own instead."""
    if "session_search" not in getattr(agent, "valid_tool_names", ()):
        return
    from hermes_state import SessionDB

    agent._session_db = SessionDB(db_path=home / "state.db")


def _build(
    settings: BridgeSettings,
    session_id: str,
    model: ModelSpec,
    profile: str,
    mcp: tuple[McpServerSpec, ...] = (),
) -> Any:
    from run_agent import AIAgent  # after prepare_hermes_home(): hermes fixes paths at import

    from agent_chat.bridge import hermes_caches, sandbox
    from agent_chat.bridge.command_env import hide_app_settings
    from agent_chat.bridge.mcp import connected_toolsets
    from agent_chat.bridge.workspace import guard_file_writes

    guard_file_writes()
    hide_app_settings()
    sandbox.install()
    check_ssl_once()
    hermes_caches.install()
    mcp_toolsets, mcp_problems = connected_toolsets(mcp)
    kwargs: dict[str, Any] = {
        "base_url": model.base_url,
        "api_key": model.api_key or PLACEHOLDER_API_KEY,
        "provider": "custom",
        "model": model.model,
        "tool_delay": 0,
        "enabled_toolsets": [*settings.toolsets_for(profile), *mcp_toolsets],
        "quiet_mode": True,
        "session_id": session_id,
        # The bridge's cwd is not the user's project: AGENTS.md/CLAUDE.md found there must not
        # reach the prompt. The persona in $HERMES_HOME/SOUL.md still does.
        "skip_context_files": True,
        "load_soul_identity": True,
    }
    if model.max_tokens:
        kwargs["max_tokens"] = model.max_tokens
    agent = AIAgent(**kwargs)
    # quiet_mode still prints status lines to stdout; they reach us via status_callback.
    agent.suppress_status_output = True
    agent.agent_chat_mcp_problems = mcp_problems
    logger.info(
        "built agent for session %s (model %s, profile %s)", session_id, model.model, profile
    )
    return agent


def apply_context_length(agent: Any, model: ModelSpec) -> None:
    """Use the run's context length for compression decisions (the probe found another)."""
    compressor = getattr(agent, "context_compressor", None)
    if not model.context_length or compressor is None:
        return
    if getattr(compressor, "context_length", None) == model.context_length:
        return
    compressor.update_model(
        model=agent.model,
        context_length=model.context_length,
        base_url=agent.base_url,
        api_key=getattr(agent, "api_key", ""),
        provider=getattr(agent, "provider", ""),
        api_mode=getattr(agent, "api_mode", ""),
        max_tokens=getattr(agent, "max_tokens", None),
    )


def apply_vision(agent: Any, model: ModelSpec) -> None:
    """A model the app marks as reading images (`supports_images`) gets a message's image
    parts as they are: hermes otherwise decides from its config.yaml and models.dev
    (`AIAgent._model_supports_vision`), and for a model it does not know replaces each
    image with its vision tool's description. Unmarked: hermes' own decision."""
    if model.supports_images:
        agent._model_supports_vision = lambda: True
    else:
        agent.__dict__.pop("_model_supports_vision", None)
