// Streaming text for a live run: the server sends only the new text of the answer and of
// the thinking stream (rx.call_script -> window.agentChatStream.append), never the whole
// growing string, so bytes and work per token do not grow with the answer (DESIGN.md §8).
// Finished markdown blocks are memoised; only the last block is parsed again.
import React, { memo, useEffect, useMemo, useState } from "react";
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";

// One store per page: chunks may arrive before the component mounts, or out of order with
// the state delta that mounts it, so they are kept here by stream id and offset.
const store = (() => {
  if (typeof window === "undefined") return null;
  if (window.agentChatStream) return window.agentChatStream;
  const streams = new Map();
  const get = (id) => {
    let s = streams.get(id);
    if (!s) {
      s = { text: "", pending: new Map(), listeners: new Set() };
      streams.set(id, s);
    }
    return s;
  };
  const drain = (s) => {
    // Apply buffered chunks that now start at (or before) the end of the text.
    let progressed = true;
    while (progressed && s.pending.size) {
      progressed = false;
      for (const [offset, chunk] of s.pending) {
        if (offset <= s.text.length) {
          s.pending.delete(offset);
          if (offset + chunk.length > s.text.length) {
            s.text = s.text.slice(0, offset) + chunk;
          }
          progressed = true;
        }
      }
    }
  };
  const notify = (s) => s.listeners.forEach((fn) => fn(s.text));
  const api = {
    // `chunk` is the stream's text from `offset` on (offset = characters sent before).
    append(id, offset, chunk) {
      const s = get(id);
      s.pending.set(offset, chunk);
      const before = s.text.length;
      drain(s);
      if (s.text.length !== before) notify(s);
    },
    // The text known from the state (on mount or reload): never shortens what arrived.
    seed(id, text) {
      const s = get(id);
      if (text.length > s.text.length) s.text = text;
      drain(s);
      return s.text;
    },
    subscribe(id, fn) {
      const s = get(id);
      s.listeners.add(fn);
      return () => s.listeners.delete(fn);
    },
    text(id) {
      return streams.has(id) ? streams.get(id).text : "";
    },
    drop(id) {
      streams.delete(id);
    },
  };
  window.agentChatStream = api;
  window.acs = api.append; // the short name the server's scripts call
  return api;
})();

// Split at blank lines outside code fences: every block but the last is finished.
function splitBlocks(text) {
  const blocks = [];
  let start = 0;
  let inFence = false;
  let i = 0;
  while (i < text.length) {
    const end = text.indexOf("\n", i);
    const lineEnd = end === -1 ? text.length : end;
    const line = text.slice(i, lineEnd);
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (!inFence && line.trim() === "" && lineEnd > start && i > start) {
      blocks.push(text.slice(start, lineEnd + 1));
      start = lineEnd + 1;
    }
    i = lineEnd + 1;
  }
  blocks.push(text.slice(start));
  return blocks;
}

const safeUrl = (url) => (/^\s*(javascript|vbscript|data):/i.test(url || "") ? "" : url);

// A model's image becomes a link: nothing remote loads until the person clicks.
const components = {
  img: ({ src, alt }) => (
    <a href={src} target="_blank" rel="noopener noreferrer nofollow" className="md-image-link">
      {"🖼 "}
      {alt || "image"}
      {" (open)"}
    </a>
  ),
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow">
      {children}
    </a>
  ),
};

const Block = memo(function Block({ text }) {
  return (
    <ReactMarkdown remarkPlugins={[remarkGfm]} urlTransform={safeUrl} components={components} skipHtml>
      {text}
    </ReactMarkdown>
  );
});

export function StreamText({ streamId, initial, markdown, className }) {
  const [text, setText] = useState(() => (store ? store.seed(streamId, initial || "") : initial || ""));
  useEffect(() => {
    if (!store) return undefined;
    setText(store.seed(streamId, initial || ""));
    return store.subscribe(streamId, setText);
  }, [streamId, initial]);
  const blocks = useMemo(() => (markdown ? splitBlocks(text) : null), [text, markdown]);
  if (!markdown) {
    return (
      <div className={className} style={{ whiteSpace: "pre-wrap" }}>
        {text}
      </div>
    );
  }
  return (
    <div className={className}>
      {blocks.map((block, index) => (
        <Block key={index} text={block} />
      ))}
    </div>
  );
}
