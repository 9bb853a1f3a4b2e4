// The app's one renderer of agent output, streamed or finished (components/stream_text.py).
// A live answer grows by chunks: the server sends only new text, in one envelope
// `acs(streamId, offset, text)` (agent_chat/live/feed.py), never the whole growing string,
// so bytes and work per token do not grow with the answer. A finished answer comes whole
// as the `text` prop. Finished markdown blocks are memoised; only the last is parsed again.
import React, { memo, useEffect, useMemo, useState } from "react";
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { CodeBlock } from "./code_block.jsx";

const SWEEP_AFTER_MS = 15000; // a stream no component shows is dropped after this long

// One store per page: chunks may arrive before the component mounts, or out of order with
// the state delta that mounts it, so they are kept here by stream id and offset. Stream ids
// are opaque here: the server makes them.
const store = (() => {
  if (typeof window === "undefined") return null;
  if (window.agentChatStream) return window.agentChatStream;
  const streams = new Map();
  const get = (id) => {
    let s = streams.get(id);
    if (!s) {
      s = { text: "", pending: new Map(), listeners: new Set(), idleSince: Date.now() };
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
  // Streams nobody shows any more (a finished answer scrolled out of the loaded page, a
  // conversation left) are dropped, so a long-open tab keeps only what it shows.
  let lastSweep = Date.now();
  const sweep = () => {
    const now = Date.now();
    if (now - lastSweep < SWEEP_AFTER_MS / 3) return;
    lastSweep = now;
    for (const [id, s] of streams) {
      if (s.listeners.size === 0 && now - s.idleSince > SWEEP_AFTER_MS) streams.delete(id);
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
      sweep();
    },
    // Text known whole (a finished answer, or what the page had): never shortens a stream.
    seed(id, text) {
      const s = get(id);
      if (text.length > s.text.length) s.text = text;
      drain(s);
      return s.text;
    },
    subscribe(id, fn) {
      const s = get(id);
      s.listeners.add(fn);
      return () => {
        s.listeners.delete(fn);
        if (s.listeners.size === 0) s.idleSince = Date.now();
        sweep();
      };
    },
    text(id) {
      return streams.has(id) ? streams.get(id).text : "";
    },
    size() {
      return streams.size;
    },
    copy(id) {
      const text = api.text(id);
      if (navigator.clipboard) return navigator.clipboard.writeText(text);
      return Promise.resolve();
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

// The safety rules, the same for every text: raw HTML is shown as the text it is (never
// parsed into elements), no script URLs, images only on click.
const htmlAsText = () => (tree) => {
  const walk = (node) => {
    if (node.type === "html") node.type = "text";
    if (node.children) node.children.forEach(walk);
  };
  walk(tree);
};
const safeUrl = (url) => (/^\s*(javascript|vbscript|data):/i.test(url || "") ? "" : url);

// A model's image becomes a link: nothing remote loads until the person clicks. A fenced
// code block is highlighted and gets a copy button (assets/code_block.jsx).
const components = {
  pre: CodeBlock,
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
    <ReactMarkdown remarkPlugins={[remarkGfm, htmlAsText]} urlTransform={safeUrl} components={components} skipHtml>
      {text}
    </ReactMarkdown>
  );
});

function useStream(streamId, text) {
  const initial = text || "";
  const [value, setValue] = useState(() =>
    store && streamId ? store.seed(streamId, initial) : initial,
  );
  useEffect(() => {
    if (!store || !streamId) {
      setValue(initial);
      return undefined;
    }
    setValue(store.seed(streamId, initial));
    return store.subscribe(streamId, setValue);
  }, [streamId, initial]);
  return value;
}

export function StreamText({ streamId, text, markdown, className }) {
  const value = useStream(streamId, text);
  const blocks = useMemo(() => (markdown ? splitBlocks(value) : null), [value, markdown]);
  if (!markdown) {
    return (
      <div className={className} style={{ whiteSpace: "pre-wrap" }}>
        {value}
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
