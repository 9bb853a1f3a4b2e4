// The app's one renderer of agent output, streamed or finished (components/stream_text.py).
// A live answer grows by chunks: the server sends only new text, in one envelope
// `acs(streamId, offset, text)` (agent_chat/live/feed.py), never the whole growing string,
// so bytes and work per token do not grow with the answer. A finished answer comes whole
// as the `text` prop. The page's work per update is bounded too: the split into
// markdown blocks resumes where it stopped (finished blocks are never split or parsed again),
// finished blocks are memoised in groups (React skips a group whole), and a stream's
// listeners run at most once per animation frame however many chunks came in it, less often
// when a render takes long (a frame budget, below).
import React, { memo, useEffect, useMemo, useRef, useState } from "react";
import { flushSync } from "react-dom";
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { CodeBlock } from "./code_block.jsx";

const SWEEP_AFTER_MS = 15000; // a stream no component shows is dropped after this long
const RENDER_WAIT = 3; // after a render, wait 3 × its time before the next one (notify below)
const MAX_WAIT_MS = 1000; // ... but never longer than this

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
  // Listeners (the components showing the stream) hear of new text once per frame: chunks
  // that arrive within one frame cost one render. A hidden tab has no frames: a timer then.
  // Frame budget: a render of a long unfinished block (its markdown parse, then the layout
  // of the whole block) can take longer than the time between two updates; rendering every
  // update then keeps the main thread busy and the socket's messages queue behind it (the
  // tab falls further behind: benchmarks/RESULTS.md, "goal 2"). So the next render waits
  // RENDER_WAIT times as long as the last one took (its script, style and layout), at most
  // MAX_WAIT_MS: text rendering then keeps under a quarter of the main thread. Renders
  // cheaper than a frame are not held back at all. The time is measured synchronously (the
  // render, then the layout it needs, forced here rather than a moment later in the same
  // frame): a timer after the frame would also count whatever other tasks were queued (a
  // page still loading, socket messages), and a cheap render would then be held back.
  const notify = (s) => {
    if (s.scheduled) return;
    s.scheduled = true;
    const run = () => {
      s.scheduled = false;
      const start = performance.now();
      flushSync(() => s.listeners.forEach((fn) => fn(s.text)));
      void document.documentElement.offsetHeight; // style and layout, now
      const took = performance.now() - start;
      s.notBefore = performance.now() + Math.min(RENDER_WAIT * took, MAX_WAIT_MS);
    };
    const frame = () => {
      const wait = (s.notBefore || 0) - performance.now();
      if (wait > 0) setTimeout(() => requestAnimationFrame(run), wait);
      else run();
    };
    if (typeof requestAnimationFrame === "function" && !document.hidden) requestAnimationFrame(frame);
    else setTimeout(run, 100);
  };
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

// Split at blank lines outside code fences: every block but the last is finished. The split
// of a growing text resumes where it stopped (`newSplit()` holds the finished blocks and how
// far it scanned), so an update costs the new text, not the whole. Only complete lines are
// scanned (an unfinished one is scanned again once it ends), so a text split over any number
// of updates gives exactly the blocks of the whole text split at once: one code path for
// streamed and finished answers, hence the same DOM after a reload. Finished blocks are kept
// in groups of GROUP, each an array never changed once full (React skips it whole).
const FENCE = /^\s*(```|~~~)/;
const GROUP = 32;

function newSplit() {
  return { text: "", groups: [], start: 0, pos: 0, inFence: false };
}

function finishBlock(sp, block) {
  const last = sp.groups[sp.groups.length - 1];
  if (!last || last.length >= GROUP) sp.groups.push([block]);
  else sp.groups[sp.groups.length - 1] = [...last, block]; // a new array: its group re-renders
}

// `sp` advanced to `text`; { groups, open } (open: the last, unfinished block).
function splitOn(sp, text) {
  // A text that does not extend the one split (a different answer, a rewritten stream)
  // starts over. startsWith is one native comparison, no per-line work.
  if (!text.startsWith(sp.text)) Object.assign(sp, newSplit());
  sp.text = text;
  let i = sp.pos;
  for (;;) {
    const end = text.indexOf("\n", i);
    if (end === -1) break;
    const line = text.slice(i, end);
    if (FENCE.test(line)) sp.inFence = !sp.inFence;
    if (!sp.inFence && i > sp.start && line.trim() === "") {
      finishBlock(sp, text.slice(sp.start, end + 1));
      sp.start = end + 1;
    }
    i = end + 1;
  }
  sp.pos = i;
  return { groups: sp.groups, open: text.slice(sp.start) };
}

// The whole text split at once (what a reload renders), for tests in the page.
function splitBlocks(text) {
  const { groups, open } = splitOn(newSplit(), text);
  return [...groups.flat(), open];
}

// For tests in the page: the blocks of `text` fed in pieces ending at `cuts` (offsets), as a
// stream is, and the blocks of the whole text at once; the two must always be equal.
if (store) {
  store.blocks = (text, cuts = []) => {
    const sp = newSplit();
    for (const cut of cuts) splitOn(sp, text.slice(0, cut));
    const { groups, open } = splitOn(sp, text);
    return { streamed: [...groups.flat(), open], whole: splitBlocks(text) };
  };
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

// Finished blocks, a group at a time: a group's array is never changed once full, so memo
// skips it whole and React's work per update does not grow with the answer. The browser's
// work neither: a group is one element whose content is skipped (style, layout, paint) while
// it is off screen (`.md-group`, assets/styles.css), so a frame lays out the blocks in view
// and the growing last block, not the whole answer.
const Group = memo(function Group({ blocks }) {
  return (
    <div className="md-group">
      {blocks.map((block, index) => (
        <Block key={index} text={block} />
      ))}
    </div>
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
  const split = useRef(null);
  const parts = useMemo(() => {
    if (!markdown) return null;
    if (!split.current) split.current = newSplit();
    return splitOn(split.current, value);
  }, [value, markdown]);
  if (!markdown) {
    return (
      <div className={className} style={{ whiteSpace: "pre-wrap" }}>
        {value}
      </div>
    );
  }
  return (
    <div className={className}>
      {parts.groups.map((blocks, index) => (
        <Group key={index} blocks={blocks} />
      ))}
      <Block key="open" text={parts.open} />
    </div>
  );
}
