"""The memory drawer: what the agent remembers of the open conversation.

A right-hand sheet with the statistics on top and four tabs, one module each: working memory
(`working`), short-term tool calls (`short_term`), medium-term summaries (`medium_term`) and
long-term MEMORY.md / USER.md (`long_term`). `drawer` puts them together; the look lives in
assets/memory.css.
"""

from agent_chat.components.memory.drawer import memory_drawer, memory_sheet

__all__ = ["memory_drawer", "memory_sheet"]
