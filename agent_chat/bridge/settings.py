"""Bridge settings, read from the environment before hermes is imported.

hermes loads ``$HERMES_HOME/.env`` into ``os.environ`` (override=True) when it is imported,
so everything the bridge needs is read here first and kept in a frozen object.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_chat.bridge.sandbox import MODES, Policy
from agent_chat.common.tool_profiles import CHAT, DELEGATION, TOOLSETS, enabled_profiles
from agent_chat.common.workspaces import workspaces_root

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_HERMES_HOME = PROJECT_ROOT / "data" / "hermes"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 18731


@dataclass(frozen=True)
class BridgeSettings:
    hermes_home: Path = DEFAULT_HERMES_HOME
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str | None = None
    # Host names besides loopback the bridge answers to (a bridge on another machine, behind
    # a name); anything else is refused (DNS rebinding).
    allowed_hosts: tuple[str, ...] = ()
    max_active_runs: int = 5
    agent_pool_size: int = 8
    # A question waits this long for an answer; 24 h is "no timeout" in practice.
    clarify_max_wait_s: float = 86400.0
    extra_toolsets: tuple[str, ...] = ()  # added to every profile (AGENT_CHAT_TOOLSETS)
    # Chat's agent may hand work to child agents too (AGENT_CHAT_DELEGATION_IN_CHAT=on);
    # Workspace's always may (common/tool_profiles.py).
    delegation_in_chat: bool = False
    tool_profiles: tuple[str, ...] = (CHAT,)
    workspaces_root: Path = PROJECT_ROOT / "data" / "workspaces"
    skills_dir: Path | None = None  # the app's skills, listed to hermes' `skills` tools
    keepalive_interval_s: float = 15.0
    buffer_retention_s: float = 3600.0
    # At most this many ended runs are kept for replay, newest first (on top of the hour):
    # an app that was away needs only the runs that ended meanwhile, which are never more
    # than were running. Without it a busy hour kept every run's events (the soak's growth).
    buffer_retention_runs: int = 200
    # A working run with no event for this long is failed (waiting for an answer is exempt).
    run_idle_timeout_s: float = 600.0
    # How Workspace commands are isolated (bridge/sandbox.py: AGENT_CHAT_SANDBOX,
    # AGENT_CHAT_SANDBOX_NETWORK).
    sandbox: Policy = Policy()
    # Build a throwaway agent at start so the first conversation does not pay hermes'
    # once-per-process costs (tests of many short-lived bridges turn it off).
    warm_up: bool = True

    @property
    def toolsets(self) -> list[str]:
        """The default (Chat) profile's toolsets."""
        return self.toolsets_for(CHAT)

    def toolsets_for(self, profile: str) -> list[str]:
        """The explicit hermes toolset allowlist of a profile (``None`` would mean every
        tool), plus the operator's extra toolsets."""
        names = list(TOOLSETS[profile])
        if profile == CHAT and self.delegation_in_chat:
            names.append(DELEGATION)
        names += [name for name in self.extra_toolsets if name not in names]
        return names


def _number(env: Mapping[str, str], name: str, default: float, kind: type = int) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a {kind.__name__}, got {raw!r}") from exc
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {raw!r}")
    return value


def load_bridge_settings(env: Mapping[str, str] | None = None) -> BridgeSettings:
    """Read the bridge settings from ``env`` (default: ``os.environ``)."""
    env = os.environ if env is None else env
    toolsets = tuple(
        name.strip() for name in env.get("AGENT_CHAT_TOOLSETS", "").split(",") if name.strip()
    )
    return BridgeSettings(
        hermes_home=Path(env.get("HERMES_HOME") or DEFAULT_HERMES_HOME).resolve(),
        host=env.get("AGENT_CHAT_BRIDGE_HOST") or DEFAULT_HOST,
        port=int(_number(env, "AGENT_CHAT_BRIDGE_PORT", DEFAULT_PORT)),
        token=env.get("AGENT_CHAT_BRIDGE_TOKEN") or None,
        allowed_hosts=tuple(
            h.strip()
            for h in env.get("AGENT_CHAT_BRIDGE_ALLOWED_HOSTS", "").split(",")
            if h.strip()
        ),
        max_active_runs=int(_number(env, "AGENT_CHAT_MAX_ACTIVE_RUNS", 5)),
        agent_pool_size=int(_number(env, "AGENT_CHAT_AGENT_POOL_SIZE", 8)),
        clarify_max_wait_s=_number(env, "AGENT_CHAT_CLARIFY_MAX_WAIT_S", 86400.0, float),
        extra_toolsets=toolsets,
        delegation_in_chat=_switch(env, "AGENT_CHAT_DELEGATION_IN_CHAT"),
        tool_profiles=enabled_profiles(env),
        workspaces_root=workspaces_root(env),
        skills_dir=Path(env["AGENT_CHAT_SKILLS_DIR"]).resolve()
        if env.get("AGENT_CHAT_SKILLS_DIR")
        else PROJECT_ROOT / "skills",
        keepalive_interval_s=_number(env, "AGENT_CHAT_BRIDGE_KEEPALIVE_S", 15.0, float),
        buffer_retention_s=_number(env, "AGENT_CHAT_BRIDGE_RETENTION_S", 3600.0, float),
        buffer_retention_runs=int(_number(env, "AGENT_CHAT_BRIDGE_RETENTION_RUNS", 200)),
        run_idle_timeout_s=_number(env, "AGENT_CHAT_RUN_IDLE_TIMEOUT_S", 600.0, float),
        sandbox=sandbox_policy(env),
    )


def _switch(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return default
    if raw not in ("on", "off"):
        raise ValueError(f"{name} must be on or off, not {raw!r}")
    return raw == "on"


def sandbox_policy(env: Mapping[str, str]) -> Policy:
    mode = (env.get("AGENT_CHAT_SANDBOX") or "auto").strip().lower()
    if mode not in MODES:
        raise ValueError(f"AGENT_CHAT_SANDBOX must be one of {', '.join(MODES)}, not {mode!r}")
    network = (env.get("AGENT_CHAT_SANDBOX_NETWORK") or "off").strip().lower()
    if network not in ("on", "off"):
        raise ValueError(f"AGENT_CHAT_SANDBOX_NETWORK must be on or off, not {network!r}")
    return Policy(mode=mode, network=network == "on")


def prepare_hermes_home(settings: BridgeSettings) -> None:
    """Point hermes at the bridge's home; must run before ``run_agent`` is imported."""
    settings.hermes_home.mkdir(parents=True, exist_ok=True)
    os.environ["HERMES_HOME"] = str(settings.hermes_home)
    _configure_hermes(settings)
    from agent_chat.bridge import tool_scan

    tool_scan.install()


def _configure_hermes(settings: BridgeSettings) -> None:
    """Settings the bridge owns in ``$HERMES_HOME/config.yaml``; the rest is the operator's.

    - ``skills.external_dirs``: the app's skills folder, so hermes' ``skills`` tools list
      and load the same skills the composer offers.
    - ``agent.coding_context`` (only when unset): ``off``. In ``auto`` hermes describes the
      git repository of the *bridge's* working directory (this project) in every system
      prompt, which is neither the user's project nor private to a conversation, and its
      four git calls cost ~0.5 s on each conversation's first answer.
    - ``approvals.mode`` (only when unset): ``manual``, so a person decides every dangerous
      step; hermes' own default ``smart`` lets an auxiliary model approve commands itself.
    - ``security.tirith_enabled`` (only when unset): hermes' optional command scanner
      fetches its binary from the internet in the background; its pattern guards (which
      raise our approvals) run either way.
    """
    import yaml  # a hermes dependency

    path = settings.hermes_home / "config.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    config = config if isinstance(config, dict) else {}
    before = yaml.safe_dump(config, sort_keys=True)
    skills = config.setdefault("skills", {}) if isinstance(config.get("skills", {}), dict) else {}
    if settings.skills_dir is not None:
        skills["external_dirs"] = [str(settings.skills_dir)]
        config["skills"] = skills
    agent = config.setdefault("agent", {})
    if isinstance(agent, dict):
        agent.setdefault("coding_context", "off")
    approvals = config.setdefault("approvals", {})
    if isinstance(approvals, dict):
        approvals.setdefault("mode", "manual")
    security = config.setdefault("security", {})
    if isinstance(security, dict):
        security.setdefault("tirith_enabled", False)
    if yaml.safe_dump(config, sort_keys=True) != before:
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
