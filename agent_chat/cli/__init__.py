"""The `agent-chat` command line: the app's HTTP API from a terminal (see `__main__`).

Plain Python on httpx, httpx-sse and rich; it talks to the app only over HTTP."""
