"""AGENT_CHAT_SANDBOX and _NETWORK as the bridge reads them, what each mode does when
bubblewrap is missing (said plainly, or refused), and the command line a sandboxed command
gets (only its own folders writable, nothing of the app's data bound)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_chat.bridge import sandbox
from agent_chat.bridge.sandbox import Policy, Sandbox, SandboxUnavailable, command
from agent_chat.bridge.settings import sandbox_policy


def test_settings_read_the_mode_and_the_network() -> None:
    assert sandbox_policy({}) == Policy("auto", network=False)
    on = {"AGENT_CHAT_SANDBOX": "Required", "AGENT_CHAT_SANDBOX_NETWORK": "on"}
    assert sandbox_policy(on) == Policy("required", network=True)
    with pytest.raises(ValueError, match="AGENT_CHAT_SANDBOX must be one of auto, required"):
        sandbox_policy({"AGENT_CHAT_SANDBOX": "maybe"})
    with pytest.raises(ValueError, match="AGENT_CHAT_SANDBOX_NETWORK must be on or off"):
        sandbox_policy({"AGENT_CHAT_SANDBOX_NETWORK": "yes please"})


@pytest.fixture
def no_bubblewrap(monkeypatch: pytest.MonkeyPatch):
    sandbox.unavailable.cache_clear()
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    yield
    sandbox.unavailable.cache_clear()


def test_without_bubblewrap_auto_says_so_and_required_refuses(
    no_bubblewrap: None, tmp_path: Path
) -> None:
    auto, required = Policy("auto"), Policy("required")
    for policy in (auto, required):
        assert policy.status().startswith("unavailable: bubblewrap is not installed")
        assert "apt install bubblewrap" in policy.status()
        assert not policy.isolated()
    assert auto.for_run(tmp_path, "c1", tmp_path / "c1") is None  # runs, unsandboxed
    with pytest.raises(SandboxUnavailable, match="AGENT_CHAT_SANDBOX=required"):
        required.for_run(tmp_path, "c1", tmp_path / "c1")
    off = Policy("off")
    assert off.for_run(tmp_path, "c1", tmp_path / "c1") is None
    assert off.status().startswith("off:")


def test_a_sandboxed_command_binds_only_its_own_folders(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "ws" / "c1", tmp_path / "ws" / ".sandbox" / "c1")
    argv = command(box, ["/bin/bash", "-c", "ls"], cwd="/root/elsewhere")
    writable = [argv[i + 1 : i + 3] for i, a in enumerate(argv) if a == "--bind"]
    assert writable == [[str(box.home)] * 2, [str(box.folder)] * 2]
    assert "--unshare-all" in argv and "--share-net" not in argv
    assert argv[argv.index("--chdir") + 1] == str(box.folder)  # not a path it cannot see
    assert argv[-4:] == ["--", "/bin/bash", "-c", "ls"]
    bound = {argv[i + 2] for i, a in enumerate(argv) if a in ("--bind", "--ro-bind")}
    assert not any(p.startswith(str(tmp_path)) for p in bound - {str(box.home), str(box.folder)})
    # The command's own /tmp comes before every bind, which may lie under /tmp (a checkout
    # there holds hermes' Python: a tmpfs mounted after it hid the interpreter).
    assert argv.index("--tmpfs") < min(i for i, a in enumerate(argv) if a.endswith("-bind"))
    assert argv[argv.index("--tmpfs") + 1] == "/tmp"
    networked = command(Sandbox(box.folder, box.home, network=True), ["ls"], cwd=None)
    assert "--share-net" in networked
