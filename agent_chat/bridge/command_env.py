"""The app's own settings never reach a command the agent runs.

The bridge process inherits the launcher's environment (`./run.sh` gives both processes the
same one), and with `AGENT_CHAT_BRIDGE=embedded` hermes runs inside the web app itself. Its
terminal tool builds a command's environment from `os.environ` minus the provider keys it
knows by name (`tools.environments.local._make_run_env`), so `env` in a Workspace run would
print the administrator's password, the database URL, the bridge token (enough to approve
the agent's own dangerous commands over the bridge's API) and the OIDC client secret.

hermes asks one predicate, `_is_hermes_internal_secret`, on every path that spawns a process
for the agent (the terminal, its background processes, hermes' other subprocesses) and drops
what it says "yes" to unconditionally, whatever a skill's passthrough list asks for. We add
our variables to it: every name starting `AGENT_CHAT_` or `REFLEX_` (the app's and Reflex's
settings: nothing a command needs), and the usual database and Redis URL names. The code
tool (`execute_code`) already passes only an allow-list of variables.
"""

from __future__ import annotations

import threading

APP_PREFIXES = ("AGENT_CHAT_", "REFLEX_")
APP_NAMES = frozenset({"DATABASE_URL", "REDIS_URL", "PGPASSWORD"})

_lock = threading.Lock()
_installed = False


def is_app_setting(name: str) -> bool:
    upper = name.upper()
    return upper.startswith(APP_PREFIXES) or upper in APP_NAMES


def hide_app_settings() -> None:
    """Teach hermes' subprocess filter our names, once per process (after hermes is
    importable, i.e. after prepare_hermes_home)."""
    global _installed
    with _lock:
        if _installed:
            return
        import tools.environments.local as local

        hermes_own = local._is_hermes_internal_secret

        def secret(key: str) -> bool:
            return is_app_setting(key) or hermes_own(key)

        local._is_hermes_internal_secret = secret
        _installed = True
