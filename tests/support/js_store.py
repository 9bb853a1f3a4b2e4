"""The page's stream store (`assets/stream_text.jsx`) run in node, for tests of what the live
feed sends it: the store's code is read from the asset itself, so a change of the JS is a
change of what these tests run.

The asset is a React module (JSX, npm imports) that node cannot load as it is; the store and
what comes before it in the file (`const store = (() => { ... })();` and its constants) is
plain JavaScript over `window`. `JsPages` evaluates that source, without the imports, in a fresh node `vm` context per page (whose
`window` is its global, as in a browser), runs there the exact scripts the server sends
(`Patch.script`, i.e. `window.acs&&acs(...)`), and reads the texts back with the store's
`text(id)`. One node process serves a whole test session, one JSON line per request.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.support.processes import ROOT

ASSET = ROOT / "assets" / "stream_text.jsx"
_STORE = re.compile(r"^const store = \(\(\) => \{$.*?^\}\)\(\);$", re.MULTILINE | re.DOTALL)
_IMPORT = re.compile(r"^import\b.*?;$", re.MULTILINE | re.DOTALL)

# Requests on stdin, one JSON line each: {"page": n, "run": [script, ...], "read": [id, ...]}
# (a new page number makes a new page); the answer on stdout: {"texts": {id: text}} or
# {"error": "..."}.
_DRIVER = r"""
const vm = require("vm");
const readline = require("readline");
const source = process.argv[1];
const pages = new Map();
function page(n) {
  if (!pages.has(n)) {
    const context = { document: { hidden: true }, setTimeout: () => 0, navigator: {} };
    context.window = context;
    vm.createContext(context);
    vm.runInContext(source + "\n;globalThis.__store = store;", context, { filename: "stream_text.jsx" });
    pages.set(n, context);
  }
  return pages.get(n);
}
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let answer;
  try {
    const request = JSON.parse(line);
    const context = page(request.page);
    for (const script of request.run) vm.runInContext(script, context);
    const texts = {};
    for (const id of request.read) texts[id] = context.__store.text(id);
    answer = { texts };
  } catch (error) {
    answer = { error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
"""


def store_source(asset: Path = ASSET) -> str:
    """The asset up to the end of its store, without its imports: the store's JavaScript as
    it stands (fails if the store cannot be found)."""
    text = asset.read_text(encoding="utf-8")
    found = _STORE.search(text)
    assert found, f"no `const store = (() => {{ ... }})();` in {asset}"
    return _IMPORT.sub("", text[: found.end()])


class JsPages:
    """A node process holding any number of pages, each with its own store."""

    def __init__(self) -> None:
        node = shutil.which("node")
        assert node, "node is needed to run assets/stream_text.jsx's store"
        self._process = subprocess.Popen(
            [node, "-e", _DRIVER, store_source()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._pages = 0

    def new_page(self) -> JsPage:
        self._pages += 1
        return JsPage(self, self._pages)

    def request(self, page: int, run: list[str], read: list[str]) -> dict[str, str]:
        process = self._process
        assert process.stdin and process.stdout
        process.stdin.write(json.dumps({"page": page, "run": run, "read": read}) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        assert line, f"node ended (exit code {process.poll()})"
        answer: dict[str, Any] = json.loads(line)
        assert "error" not in answer, answer["error"]
        return answer["texts"]

    def close(self) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class JsPage:
    """One tab: the scripts the server sent it, run in its store when a text is read."""

    def __init__(self, pages: JsPages, number: int) -> None:
        self._pages = pages
        self._number = number
        self._scripts: list[str] = []

    def run(self, script: str) -> None:
        """Hand the page a script the server sends (`rx.call_script(patch.script)`)."""
        if script:
            self._scripts.append(script)

    def texts(self, *stream_ids: str) -> dict[str, str]:
        """The store's text of each stream ("" for one it never heard of)."""
        scripts, self._scripts = self._scripts, []
        return self._pages.request(self._number, scripts, list(stream_ids))

    def text(self, stream_id: str) -> str:
        return self.texts(stream_id)[stream_id]
