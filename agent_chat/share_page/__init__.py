"""Read-only share links (`/s/<token>`): a snapshot of a conversation's active branch, shown
to anyone with the link, without login.

- `snapshot`: what a link shows, taken once when the link is made (text only: no model,
  key, settings or other conversation is ever read into it; a message's files by name and
  size, never their bytes or a URL to them; a picture's thumbnail, made then, kept in it).
- `links`: making a link (snapshot + `db/shares.py`), the expiry choices.
- `render`: the page, server-rendered HTML (Markdown through markdown-it with raw HTML off,
  safe links, images as links), and its strict headers.

Plain Python: nothing here imports reflex. The route is `api/shared.py`; the login gate lets
exactly `/s/<token>` and `/s/<token>/pictures/<n>` through (`auth/paths.py:is_share_path`).
"""
