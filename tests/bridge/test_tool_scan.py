"""hermes' scan of its tool modules, kept between processes (agent_chat/bridge/tool_scan.py)."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

from agent_chat.bridge.tool_scan import _kept


class CountingScan:
    def __init__(self) -> None:
        self.calls: list[Path] = []

    def __call__(self, path: Path) -> bool:
        self.calls.append(path)
        return "registry.register(" in path.read_text(encoding="utf-8")


def _modules(folder: Path) -> tuple[Path, Path]:
    folder.mkdir()
    tool = folder / "a_tool.py"
    tool.write_text("from tools.registry import registry\nregistry.register(x=1)\n")
    helper = folder / "helper.py"
    helper.write_text("def f():\n    return 1\n")
    return tool, helper


def test_a_second_process_answers_from_the_kept_answers(tmp_path: Path) -> None:
    tool, helper = _modules(tmp_path / "tools")
    cache = tmp_path / "tools" / "__pycache__" / "scan.json"
    first = CountingScan()
    scan = _kept(first, cache)
    assert (scan(tool), scan(helper)) == (True, False)
    assert first.calls == [tool, helper] and cache.exists()

    again = CountingScan()  # a new process: the same answers, nothing parsed
    scan = _kept(again, cache)
    assert (scan(tool), scan(helper)) == (True, False)
    assert again.calls == []


def test_a_changed_module_is_scanned_again(tmp_path: Path) -> None:
    tool, helper = _modules(tmp_path / "tools")
    cache = tmp_path / "cache.json"
    _kept(CountingScan(), cache)(helper)
    helper.write_text("from tools.registry import registry\nregistry.register(y=2)\n")
    stat = helper.stat()
    os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    later = CountingScan()
    assert _kept(later, cache)(helper) is True
    assert later.calls == [helper]


def test_an_unwritable_or_broken_cache_still_answers(tmp_path: Path) -> None:
    tool, _ = _modules(tmp_path / "tools")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    scan = CountingScan()
    assert _kept(scan, blocked / "scan.json")(tool) is True  # cannot be written: parsed
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert _kept(CountingScan(), broken)(tool) is True


def test_hermes_gets_the_same_tool_modules_as_its_own_scan(tmp_path: Path) -> None:
    import tools.registry as registry

    own = inspect.unwrap(registry._module_registers_tools)  # hermes' own, kept or not
    folder = Path(registry.__file__).resolve().parent
    files = sorted(folder.glob("*.py"))
    cache = tmp_path / "scan.json"
    expected = [own(path) for path in files]
    assert any(expected)
    assert [_kept(own, cache)(path) for path in files] == expected
    assert [_kept(CountingScan(), cache)(path) for path in files] == expected
