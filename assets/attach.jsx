// Files attached in the composer (components/attach.py): the paperclip button, drag and drop
// onto the page, an image pasted from the clipboard. Each file uploads at once, alone, to the
// HTTP API (POST /api/chat/attachments, the tab's login cookie) with its progress on its chip;
// the form then sends only the ids, in a hidden field `attachments` (never the bytes over the
// websocket). A send while uploads go on waits for them; a file refused (too big, empty, a
// program, a failed upload) says why on its chip and nothing is sent until it is removed.
import React, { useEffect, useRef, useState } from "react";

const UPLOAD_URL = "/api/chat/attachments";

// The uploaded files' ids, in order: what the form sends.
const doneIds = (items) => items.filter((it) => it.status === "done").map((it) => it.id);

// One store per page: the button, the tray and the page's drop and paste listeners share it.
const store = (() => {
  if (typeof window === "undefined") return null;
  if (window.agentChatAttach) return window.agentChatAttach;
  let items = [];
  let limits = { maxBytes: 20 * 1024 * 1024, maxFiles: 10 };
  let next = 1;
  const listeners = new Set();
  const changed = () => {
    items = [...items];
    listeners.forEach((f) => f(items));
  };
  const update = (key, patch) => {
    items = items.map((it) => (it.key === key ? { ...it, ...patch } : it));
    changed();
  };
  const mb = (bytes) => `${Math.round(bytes / (1024 * 1024))} MB`;
  const errorOf = (xhr) => {
    try {
      const body = JSON.parse(xhr.responseText);
      if (body && body.error && body.error.message) return body.error.message;
    } catch (e) {
      // not JSON: a proxy's page or an empty answer
    }
    if (xhr.status === 413) return `Too large (at most ${mb(limits.maxBytes)}).`;
    if (xhr.status === 401) return "Signed out: sign in again, then attach it again.";
    return xhr.status ? `The upload failed (HTTP ${xhr.status}).` : "The upload failed (no connection).";
  };
  const upload = (item) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", UPLOAD_URL);
    xhr.responseType = "text";
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) update(item.key, { progress: e.loaded / e.total });
    };
    xhr.onload = () => {
      let row = null;
      if (xhr.status === 201) {
        try {
          row = JSON.parse(xhr.responseText).attachments[0];
        } catch (e) {
          row = null;
        }
      }
      if (row) update(item.key, { status: "done", progress: 1, id: row.id, xhr: null });
      else update(item.key, { status: "error", error: errorOf(xhr), xhr: null });
      settle();
    };
    xhr.onerror = () => {
      update(item.key, { status: "error", error: errorOf(xhr), xhr: null });
      settle();
    };
    const form = new FormData();
    form.append("files", item.file, item.name);
    xhr.send(form);
    return xhr;
  };
  // A send waiting for uploads goes once the last one is done (and none failed).
  let waitingForm = null;
  const settle = () => {
    if (!waitingForm || items.some((it) => it.status === "uploading")) return;
    const form = waitingForm;
    waitingForm = null;
    changed();
    if (!items.some((it) => it.status === "error")) form.requestSubmit();
  };
  const api = {
    subscribe(f) {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    items: () => items,
    waiting: () => waitingForm !== null,
    setLimits(l) {
      limits = { ...limits, ...l };
    },
    add(files) {
      for (const file of files) {
        const key = next++;
        const name = file.name || `pasted-${new Date().toISOString().slice(0, 19).replace(/:/g, "")}.png`;
        const item = { key, name, size: file.size, file, status: "uploading", progress: 0, id: 0, error: "" };
        if (file.type.startsWith("image/")) item.preview = URL.createObjectURL(file);
        if (items.length >= limits.maxFiles) {
          item.status = "error";
          item.error = `At most ${limits.maxFiles} files in one message.`;
        } else if (file.size === 0) {
          item.status = "error";
          item.error = "The file is empty.";
        } else if (file.size > limits.maxBytes) {
          item.status = "error";
          item.error = `Too large (at most ${mb(limits.maxBytes)}).`;
        }
        items = [...items, item];
        if (item.status === "uploading") item.xhr = upload(item);
      }
      changed();
    },
    remove(key) {
      const it = items.find((x) => x.key === key);
      if (!it) return;
      if (it.xhr) it.xhr.abort();
      if (it.preview) URL.revokeObjectURL(it.preview);
      items = items.filter((x) => x.key !== key);
      changed();
      settle();
    },
    // The server took a message with these ids: their chips go (others stay).
    sent(ids) {
      const gone = new Set(ids);
      items.filter((x) => gone.has(x.id)).forEach((x) => x.preview && URL.revokeObjectURL(x.preview));
      items = items.filter((x) => !gone.has(x.id));
      changed();
    },
    // The form's submit: false stops it (uploads going on, or a refused file).
    allowSubmit(form) {
      if (items.some((it) => it.status === "error")) {
        waitingForm = null;
        changed();
        return false;
      }
      if (items.some((it) => it.status === "uploading")) {
        waitingForm = form;
        changed();
        return false;
      }
      return true;
    },
    ids: () => doneIds(items),
  };
  // A sent picture (components/message.py, `data-view="picture"`) opens over the page, full
  // size; Escape, a click or the × closes it. Its link stays the download (middle click).
  const closeViewer = () => {
    const open = document.querySelector(".picture-viewer");
    if (open) open.remove();
  };
  api.view = (url, name) => {
    closeViewer();
    const box = document.createElement("div");
    box.className = "picture-viewer";
    box.setAttribute("data-testid", "picture-viewer");
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-label", name);
    const img = document.createElement("img");
    img.src = url;
    img.alt = name;
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "×";
    close.setAttribute("aria-label", "Close");
    const link = document.createElement("a");
    link.href = url;
    link.download = name; // a download, never a page the router opens
    link.textContent = `Download ${name}`;
    box.append(img, close, link);
    box.addEventListener("click", (e) => {
      if (e.target === link) setTimeout(closeViewer, 0); // after the download has begun
      else closeViewer();
    });
    document.body.append(box);
    close.focus();
  };
  // Captured on the window, before the page's router (which would open the link as a page).
  window.addEventListener(
    "click",
    (e) => {
      const a = e.target.closest && e.target.closest('a[data-view="picture"]');
      if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
      e.preventDefault();
      e.stopPropagation();
      api.view(a.getAttribute("href"), a.getAttribute("data-name") || "");
    },
    true,
  );
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") closeViewer();
  });
  window.agentChatAttach = api;
  return api;
})();

const useItems = () => {
  const [items, setItems] = useState(store ? store.items() : []);
  useEffect(() => store.subscribe(setItems), []);
  return items;
};

const size = (bytes) => {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
};

const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");

// The paperclip: a file picker for several files (the input has no name, so the form never
// carries the files themselves).
export function AttachButton({ label }) {
  const input = useRef(null);
  return (
    <span className="attach-button-wrap">
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        onChange={(e) => {
          store.add(Array.from(e.target.files || []));
          e.target.value = "";
        }}
      />
      <button
        type="button"
        className="attach-button"
        aria-label={label}
        title={label}
        data-testid="attach-button"
        onClick={() => input.current && input.current.click()}
      >
        <svg width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
          <path d="m21.44 11.05-9.19 9.19a6 6 0 0 1-8.49-8.49l8.57-8.57A4 4 0 1 1 18 8.84l-8.59 8.57a2 2 0 0 1-2.83-2.83l8.49-8.48" />
        </svg>
      </button>
    </span>
  );
}

// The chips above the text box, the hidden field with the ids, and the page's drop and
// paste handling while the composer is on the page.
export function AttachTray({ maxBytes, maxFiles }) {
  const items = useItems();
  const [dragging, setDragging] = useState(false);
  const root = useRef(null);

  useEffect(() => {
    store.setLimits({ maxBytes, maxFiles });
  }, [maxBytes, maxFiles]);

  useEffect(() => {
    const form = root.current && root.current.closest("form");
    if (!form) return undefined;
    // Before React's own submit handler (at the page's root): stop a send that must wait.
    const onSubmit = (e) => {
      if (!store.allowSubmit(form)) {
        e.preventDefault();
        e.stopPropagation();
        return;
      }
      // The ids as they are now: a send that waited for an upload goes before React has
      // rendered the field again.
      const field = root.current && root.current.querySelector('input[name="attachments"]');
      if (field) field.value = store.ids().join(",");
    };
    form.addEventListener("submit", onSubmit);
    return () => form.removeEventListener("submit", onSubmit);
  }, []);

  useEffect(() => {
    let depth = 0;
    const enter = (e) => {
      if (!hasFiles(e)) return;
      depth += 1;
      setDragging(true);
    };
    const leave = (e) => {
      if (!hasFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const over = (e) => {
      if (hasFiles(e)) e.preventDefault(); // allows the drop
    };
    const drop = (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault(); // never open the file in the tab
      depth = 0;
      setDragging(false);
      store.add(Array.from(e.dataTransfer.files || []));
    };
    const paste = (e) => {
      const files = Array.from((e.clipboardData && e.clipboardData.files) || []);
      if (!files.length) return;
      const target = e.target;
      // Only in the composer or outside any field (not in a settings input, say).
      const inField = target && target.closest && target.closest("input, textarea, [contenteditable]");
      if (inField && !(root.current && root.current.closest("form").contains(target))) return;
      store.add(files);
      if (!e.clipboardData.types.includes("text/plain")) e.preventDefault();
    };
    window.addEventListener("dragenter", enter);
    window.addEventListener("dragleave", leave);
    window.addEventListener("dragover", over);
    window.addEventListener("drop", drop);
    document.addEventListener("paste", paste);
    return () => {
      window.removeEventListener("dragenter", enter);
      window.removeEventListener("dragleave", leave);
      window.removeEventListener("dragover", over);
      window.removeEventListener("drop", drop);
      document.removeEventListener("paste", paste);
    };
  }, []);

  const ids = doneIds(items);
  const failed = items.some((it) => it.status === "error");
  const waiting = store && store.waiting();
  return (
    <div ref={root} className="attach-tray" data-testid="attach-tray" data-count={items.length}>
      <input type="hidden" name="attachments" value={ids.join(",")} />
      {dragging ? (
        <div className="attach-drop" data-testid="attach-drop">
          Drop files to attach them
        </div>
      ) : null}
      {items.length ? (
        <div className="attach-chips">
          {items.map((it) => (
            <div
              key={it.key}
              className={`attachment-chip attachment-${it.status}`}
              data-testid="attachment-chip"
              data-name={it.name}
              data-state={it.status}
              title={it.error || it.name}
            >
              {it.preview ? (
                <img className="attachment-thumb" src={it.preview} alt="" />
              ) : (
                <span className="attachment-icon" aria-hidden="true">
                  {(it.name.split(".").pop() || "file").slice(0, 4).toUpperCase()}
                </span>
              )}
              <span className="attachment-text">
                <span className="attachment-name">{it.name}</span>
                <span className="attachment-meta" data-testid={it.error ? "attachment-error" : undefined}>
                  {it.error || (it.status === "uploading" ? `${size(it.size)} · uploading…` : size(it.size))}
                </span>
                {it.status === "uploading" ? (
                  <span className="attachment-progress" data-testid="attachment-progress">
                    <span style={{ width: `${Math.round(it.progress * 100)}%` }} />
                  </span>
                ) : null}
              </span>
              <button
                type="button"
                className="attachment-remove"
                aria-label={`Remove ${it.name}`}
                data-testid="attachment-remove"
                onClick={() => store.remove(it.key)}
              >
                ×
              </button>
            </div>
          ))}
        </div>
      ) : null}
      {failed ? (
        <div className="attach-note attach-note-error" data-testid="attach-blocked">
          Remove the files marked in red to send.
        </div>
      ) : waiting ? (
        <div className="attach-note" data-testid="attach-waiting">
          Sending when the uploads finish…
        </div>
      ) : null}
    </div>
  );
}
