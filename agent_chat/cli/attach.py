"""`--attach FILE` on `agent-chat ask`: checked while the arguments are parsed (a missing or
unreadable file, or more than MAX_ATTACHMENTS, is a usage error, exit 2, before anything is
sent), then each file uploaded (`POST /api/chat/attachments`) before the message goes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agent_chat.cli.client import ApiError, Client

MAX_ATTACHMENTS = 10  # the API's limit per message (it refuses an eleventh id)


def readable_file(value: str) -> Path:
    """argparse `type=`: a file this process can open for reading, as given."""
    path = Path(value)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{value}: is a directory, not a file")
    try:
        path.open("rb").close()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{value}: {exc.strerror or exc}") from exc
    return path


class AttachAction(argparse.Action):
    """Appends like `action="append"`, and refuses one file too many by its name."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        files = list(getattr(namespace, self.dest, None) or [])
        if len(files) >= MAX_ATTACHMENTS:
            parser.error(f"at most {MAX_ATTACHMENTS} files with --attach ({values} is one more)")
        setattr(namespace, self.dest, [*files, values])


def upload_all(client: Client, paths: list[Path]) -> list[int]:
    """The uploads' ids, in the given order. One request a file, so a refusal names its file
    even where the server's words do not (its size check on the whole form); the files
    before a refused one stay unused on the server, which sweeps them."""
    ids = []
    for path in paths:
        try:
            ids.append(client.upload(path)["id"])
        except ApiError as exc:
            raise ApiError(exc.status, f"{path} was not attached: {exc.message}", exc.code) from exc
        except OSError as exc:  # changed since the arguments were checked
            raise ApiError(0, f"{path} was not attached: {exc.strerror or exc}") from exc
    return ids
