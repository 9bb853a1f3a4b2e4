"""tests/cli drives the shared stack (tests/support/stack.py) as tests/api does: its
fixtures `api_stack` and `api_token` are tests/support/api.py's, registered by tests/conftest.py."""
