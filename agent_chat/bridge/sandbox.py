"""The agent's commands run in a bubblewrap sandbox that holds no secret of the app.

A Workspace run's commands (the terminal, its background processes, the file tools, which
hermes runs as shell commands, and `execute_code`'s Python) are spawned by the bridge, as
the bridge's user. Left alone they could read `/proc/<bridge>/environ` (the bridge token,
model keys), the app's database file and every other person's hermes home. Filtering
command text cannot stop that; the operating system can: each command runs under
bubblewrap (Debian's `bubblewrap`) in new PID, IPC, UTS, cgroup and, unless
`AGENT_CHAT_SANDBOX_NETWORK=on`, network namespaces, with a filesystem of its own:

- read-only: the system (`/usr` and its links, `/etc` without the password and private-key
  files), the Python that runs hermes (its prefix and the virtualenv);
- writable: the conversation's folder, and a folder of the conversation's own
  (`<workspaces>/.sandbox/<uuid>`: `home/` is `$HOME`, `tmp/` is `$TMPDIR`, and hermes keeps
  its shell snapshot there); `/tmp` is each command's own;
- a `/proc` that shows the sandbox's own processes only, a minimal `/dev`.

Nothing else exists inside: not the app's data folder, not other conversations' folders,
not any hermes home. Without network, services on the host's loopback (the bridge, the
app, Redis, PostgreSQL) are out of reach too; with it they answer only what their own
authentication allows.

How: the modules of hermes that spawn a command get a `subprocess` whose `Popen` wraps the
command in `bwrap` while a sandboxed run's context is entered (`entered`, a ContextVar
hermes hands to its tool threads), and hermes' temp folder for the session is the
sandbox's own. Outside such a run nothing changes. A run that should be sandboxed when
bubblewrap does not work refuses to spawn (fail closed).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from agent_chat.common.workspaces import SANDBOX_DIR

logger = logging.getLogger(__name__)

# /etc files no command needs that root could read inside (bwrap keeps the caller's uid).
MASKED_ETC = ("shadow", "shadow-", "gshadow", "gshadow-", "ssl/private")
SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# hermes' modules that spawn the agent's commands.
SPAWNING_MODULES = (
    "tools.environments.local",
    "tools.process_registry",
    "tools.code_execution_tool",
)


class SandboxUnavailable(OSError):
    """A sandboxed run wanted to spawn a command and bubblewrap does not work here."""


@dataclass(frozen=True)
class Sandbox:
    folder: Path  # the conversation's folder (writable)
    home: Path  # the conversation's own home and /tmp (writable)
    network: bool = False


_current: contextvars.ContextVar[Sandbox | None] = contextvars.ContextVar(
    "agent_chat_sandbox", default=None
)


def sandbox_home(root: Path, session_uuid: str) -> Path:
    return root / SANDBOX_DIR / session_uuid


MODES = ("auto", "required", "off")


@dataclass(frozen=True)
class Policy:
    """`AGENT_CHAT_SANDBOX`: `auto` sandboxes Workspace commands when bubblewrap works here
    and says plainly when it does not (start log, /health, the settings page); `required`
    refuses a Workspace run without it; `off` never sandboxes. `network`:
    `AGENT_CHAT_SANDBOX_NETWORK=on` gives commands the host's network."""

    mode: str = "auto"
    network: bool = False

    def status(self) -> str:
        """`sandboxed` (with network or not), or what is missing, for people to read."""
        if self.mode == "off":
            return "off: Workspace commands run without a sandbox (AGENT_CHAT_SANDBOX=off)"
        reason = unavailable()
        if reason:
            return f"unavailable: {reason}; Workspace commands run without a sandbox"
        return "bubblewrap" + (" with network" if self.network else ", no network")

    def isolated(self) -> bool:
        return self.mode != "off" and unavailable() is None

    def for_run(self, root: Path, session_uuid: str, folder: Path) -> Sandbox | None:
        """The sandbox of a Workspace run in `folder` (None: it runs without one)."""
        if self.mode == "off":
            return None
        reason = unavailable()
        if reason:
            if self.mode == "required":
                raise SandboxUnavailable(
                    f"Workspace commands need their sandbox (AGENT_CHAT_SANDBOX=required): {reason}."
                )
            return None
        return Sandbox(folder.resolve(), sandbox_home(root, session_uuid).resolve(), self.network)


@contextlib.contextmanager
def entered(sandbox: Sandbox) -> Iterator[None]:
    """Commands spawned in this context (and the tool threads hermes starts from it) run in
    `sandbox`."""
    sandbox.home.mkdir(parents=True, exist_ok=True, mode=0o700)
    for inner in ("home", "tmp"):
        (sandbox.home / inner).mkdir(exist_ok=True)
    token = _current.set(sandbox)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Sandbox | None:
    return _current.get()


@functools.cache
def unavailable() -> str | None:
    """Why bubblewrap cannot sandbox commands on this host (None: it can), tried once."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian: apt install bubblewrap)"
    probe = [bwrap, *_base_args(network=False), "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start: {exc}"
    if done.returncode != 0:
        return f"bubblewrap cannot make a sandbox here: {done.stderr.strip()[:300]}"
    return None


def _base_args(*, network: bool) -> list[str]:
    args = ["--unshare-all", "--die-with-parent", "--new-session"]
    if network:
        args.append("--share-net")
    # /tmp is each command's own; it comes first, so the binds below may lie under it (a
    # checkout, hence hermes' Python, or a workspaces root under /tmp).
    args += ["--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev"]
    for name in SYSTEM_LINKS:  # Debian's merged /usr: links; elsewhere real folders
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += ["--ro-bind", "/etc", "/etc"]
    for name in MASKED_ETC:
        path = Path("/etc") / name
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    for prefix in sorted({sys.base_prefix, sys.prefix}):  # the Python that runs the tools
        if not prefix.startswith("/usr"):
            args += ["--ro-bind", prefix, prefix]
    return args


def command(
    sandbox: Sandbox, argv: Sequence[str], *, cwd: str | None, extra_rw: Sequence[str] = ()
) -> list[str]:
    """`argv` as bubblewrap runs it in `sandbox` (cwd kept when it exists inside)."""
    bwrap = shutil.which("bwrap") or "bwrap"
    folder, home = str(sandbox.folder), str(sandbox.home)
    args = [bwrap, *_base_args(network=sandbox.network)]
    args += ["--bind", home, home, "--bind", folder, folder]
    for path in extra_rw:
        args += ["--bind", path, path]
    args += ["--setenv", "HOME", f"{home}/home", "--setenv", "TMPDIR", f"{home}/tmp"]
    inside = [folder, home, "/usr", "/etc", *extra_rw]
    chdir = cwd if cwd and any(_within(cwd, p) for p in inside) else folder
    return [*args, "--chdir", chdir, "--", *argv]


def _within(path: str, parent: str) -> bool:
    return os.path.normpath(path) == parent or os.path.normpath(path).startswith(parent + "/")


def _code_paths(argv: Sequence[str], env: dict[str, str] | None) -> list[str]:
    """What `execute_code` shares with its script: the staging folder and the RPC socket."""
    paths = []
    if argv and os.path.isabs(str(argv[-1])):
        paths.append(os.path.dirname(str(argv[-1])))
    socket_path = (env or {}).get("HERMES_RPC_SOCKET", "")
    if socket_path.startswith("/") and os.path.exists(socket_path):
        paths.append(socket_path)
    return paths


class _SandboxedSubprocess(ModuleType):
    """`subprocess` for one of hermes' spawning modules: the same, but `Popen` wraps the
    command in bubblewrap inside a sandboxed run."""

    def __init__(self, real: ModuleType, module_name: str) -> None:
        super().__init__("subprocess")
        self._real, self._module_name = real, module_name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def Popen(self, args: Any, *rest: Any, **kwargs: Any) -> subprocess.Popen:  # noqa: N802
        sandbox = current()
        if sandbox is None:
            return self._real.Popen(args, *rest, **kwargs)
        reason = unavailable()
        if reason:
            raise SandboxUnavailable(f"Commands are not run without their sandbox: {reason}.")
        argv = [args] if isinstance(args, str | bytes | os.PathLike) else list(args)
        extra = (
            _code_paths(argv, kwargs.get("env")) if "code_execution" in self._module_name else []
        )
        wrapped = command(sandbox, [str(a) for a in argv], cwd=kwargs.get("cwd"), extra_rw=extra)
        return self._real.Popen(wrapped, *rest, **kwargs)


_install_lock = threading.Lock()
_installed = False


def install() -> None:
    """Give hermes' spawning modules the sandboxing `subprocess`, its local terminal the
    sandbox's temp folder, and its PTY mode a refusal inside a sandbox (its pipe mode runs
    instead), once per process."""
    global _installed
    with _install_lock:
        if _installed:
            return
        import importlib

        for name in SPAWNING_MODULES:
            module = importlib.import_module(name)
            module.subprocess = _SandboxedSubprocess(subprocess, name)  # type: ignore[attr-defined]
        from tools.environments.local import LocalEnvironment

        own_temp = LocalEnvironment.get_temp_dir

        def get_temp_dir(self: Any) -> str:
            sandbox = current()
            return str(sandbox.home) if sandbox is not None else own_temp(self)

        LocalEnvironment.get_temp_dir = get_temp_dir  # type: ignore[method-assign]
        with contextlib.suppress(ImportError):
            from ptyprocess import PtyProcess

            own_spawn = PtyProcess.spawn.__func__  # type: ignore[attr-defined]

            def spawn(cls: Any, *args: Any, **kwargs: Any) -> Any:
                if current() is not None:
                    raise SandboxUnavailable("no terminal device inside the sandbox")
                return own_spawn(cls, *args, **kwargs)

            PtyProcess.spawn = classmethod(spawn)  # type: ignore[method-assign,assignment]
        _installed = True
