"""Agent Chat: a web console for Hermes Agent."""
