"""The Bridge service: a FastAPI app around hermes-agent's AIAgent (docs/architecture.md §4).

Start it with ``python -m agent_chat.bridge``; build it in code with
``agent_chat.bridge.app.create_app(settings)``.
"""
