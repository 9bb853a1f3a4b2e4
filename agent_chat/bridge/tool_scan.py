"""hermes' choice of tool modules, kept between processes like bytecode.

When `model_tools` is first imported, hermes decides which of its ~90 `tools/*.py` modules
register tools by reading and parsing each one (`tools.registry._module_registers_tools`,
`ast.parse`): 0.7 CPU-s at every bridge start on the 2-core test machine. The answer depends
only on the file, so it is kept in `tools/__pycache__/` beside hermes' .pyc files, keyed by
each file's size and modification time (a changed file is parsed again). Where that folder
cannot be written, every process parses as before.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

CACHE_NAME = "agent-chat-tool-modules.json"


def install() -> None:
    """Answer hermes' scan from the kept answers (idempotent; before `model_tools` is
    imported). Does nothing if this hermes has no such scan."""
    import tools.registry as registry

    scan = getattr(registry, "_module_registers_tools", None)
    if not callable(scan) or getattr(scan, "kept_answers", False):
        return
    cache = Path(registry.__file__).resolve().parent / "__pycache__" / CACHE_NAME
    registry._module_registers_tools = _kept(scan, cache)


def _kept(scan: Callable[[Path], bool], cache: Path) -> Callable[[Path], bool]:
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}

    def registers_tools(module_path: Path) -> bool:
        try:
            stat = os.stat(module_path)
        except OSError:
            return scan(module_path)
        stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
        entry = known.get(str(module_path))
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == stamp:
            return bool(entry[1])
        answer = scan(module_path)
        known[str(module_path)] = [stamp, answer]
        _save(cache, known)
        return answer

    registers_tools.kept_answers = True  # type: ignore[attr-defined]
    registers_tools.__wrapped__ = scan  # type: ignore[attr-defined]
    return registers_tools


def _save(cache: Path, known: dict) -> None:
    """Written whole and renamed into place: processes starting at once never read half."""
    partial = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(exist_ok=True)
        partial.write_text(json.dumps(known), encoding="utf-8")
        os.replace(partial, cache)
    except OSError as exc:
        logger.debug("hermes' tool scan is not kept (%s)", exc)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
