"""What the tests share: builders, launchers and database helpers.

Test modules import from here (and from `tests.fakes`), never from another test module or a
conftest; conftests stay thin, fixtures that call into these modules. The benchmarks use the
same launchers.

- `databases`: a fresh database per test (SQLite, or PostgreSQL with AGENT_CHAT_TEST_DB_URL).
- `conversations`: rows built straight in the store (a question and its running answer).
- `runs`: RunManager tests: a new chat, waiting for a run's end, what the log holds.
- `bridge`, `sse`: the bridge served in a thread, and reading its event stream.
- `processes`: starting a server process, waiting until it answers, stopping it.
- `stack`, `browser`: the real stack (fake model, bridge and app processes) and chromium.
- `attacks`: what an attacker sends the running app (websocket handshakes and frames).
- `gate`: the login gate in front of a stand-in for Reflex, a settable clock, signing in.
- `exports`: the conversation every export/import/share test reads, and reading it back.
- `workspaces`: a workspaces root with two conversations' folders and a file outside.
- `selection`: which browser files test.sh runs on its first database.
- `js_store`: the page's stream store (assets/stream_text.jsx) run in node.
- `pictures`: small real PNGs written by hand (the test MCP server's picture, uploads).
"""
