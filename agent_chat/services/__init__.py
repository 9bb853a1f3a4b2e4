"""The service layer: one function per use case, under the page (`state/`), the HTTP API
(`api/`) and so the CLI, which all call it instead of writing the use case again.

Plain Python (no reflex). Each function is keyword-only, takes the acting person
(`user_id`) and the process's parts it needs (`Backend`: storage, runs, settings), and
raises the store's errors (`db/errors.py`), which the page turns into messages and the API
into its JSON errors. `runtime.py` wires those long-lived parts once per process.
"""
