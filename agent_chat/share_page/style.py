"""The shared page's style: readable text column, light and dark by the reader's setting,
comfortable on a phone. Inline in the page and allowed by its hash (render.CSP)."""

CSS = """
:root { color-scheme: light dark; --bg: #fbfbfc; --fg: #1c1d21; --muted: #6b6f7a;
  --line: #e3e5ea; --bubble: #eef0fb; --code: #f3f4f7; --accent: #5b5bd6; --warn: #b4451f; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #151619; --fg: #e9eaee; --muted: #9a9eab; --line: #2c2e35; --bubble: #23253a;
    --code: #1e2026; --accent: #9b9bf5; --warn: #f08a64; }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
main { max-width: 760px; margin: 0 auto; padding: 24px 18px 48px; }
header { border-bottom: 1px solid var(--line); margin-bottom: 20px; padding-bottom: 12px; }
h1 { font-size: 1.5rem; line-height: 1.3; margin: 0 0 4px; overflow-wrap: anywhere; }
.meta, footer, .who, .marker { color: var(--muted); font-size: .875rem; }
footer { border-top: 1px solid var(--line); margin-top: 32px; padding-top: 12px; }
.msg { margin: 0 0 22px; }
.who { margin-bottom: 4px; font-weight: 600; }
.who time { font-weight: 400; margin-left: 6px; }
.user .bubble { background: var(--bubble); border-radius: 14px; padding: 10px 14px;
  display: inline-block; max-width: 100%; }
.bubble > :first-child, .answer > :first-child { margin-top: 0; }
.bubble > :last-child, .answer > :last-child { margin-bottom: 0; }
.answer, .bubble { overflow-wrap: anywhere; }
details { border: 1px solid var(--line); border-radius: 10px; padding: 6px 12px;
  margin: 6px 0 10px; }
summary { cursor: pointer; color: var(--muted); font-size: .875rem; }
details[open] summary { margin-bottom: 8px; }
.thinking-text { color: var(--muted); font-size: .925rem; }
.tool { margin: 8px 0; }
.tool-name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .85rem; font-weight: 600; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .85rem; }
pre { background: var(--code); border-radius: 8px; padding: 10px 12px; overflow-x: auto;
  white-space: pre-wrap; overflow-wrap: anywhere; }
:not(pre) > code { background: var(--code); border-radius: 4px; padding: 1px 4px; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 4px 8px; }
blockquote { margin: 0; padding-left: 12px; border-left: 3px solid var(--line);
  color: var(--muted); }
a { color: var(--accent); }
.image-link { color: var(--muted); }
.files { list-style: none; margin: 6px 0 0; padding: 0; font-size: .875rem; }
.files li { overflow-wrap: anywhere; }
.files .size { color: var(--muted); }
.files .picture { display: inline-flex; flex-direction: column; gap: 2px; margin: 0 8px 8px 0;
  max-width: 160px; vertical-align: top; }
.files .picture img { max-width: 160px; max-height: 160px; border-radius: 6px;
  border: 1px solid var(--line); object-fit: contain; background: var(--code); }
.todos { padding-left: 20px; }
.todo.completed { text-decoration: line-through; color: var(--muted); }
.status-note { color: var(--warn); font-size: .9rem; }
.marker { text-align: center; border-top: 1px dashed var(--line); padding-top: 6px;
  margin: 0 0 22px; }
@media (max-width: 480px) { main { padding: 16px 14px 36px; } body { font-size: 15.5px; } }
"""
