// Files attached to a message (components/attach.py), in the composer and in the edit form
// of a sent message: the paperclip button, an image pasted from the clipboard, and a drop
// (onto the page for the composer, onto its own form for another). Each file uploads at once,
// alone, to the HTTP API (POST /api/chat/attachments, the tab's login cookie) with its
// progress on its chip; the form then sends only the ids, in a hidden field `attachments`
// (never the bytes over the websocket). A send while uploads go on waits for them; a file
// refused (too big, empty, a program, a failed upload) says why on its chip and nothing is
// sent until it is removed.
import React, { useEffect, useRef, useState } from "react";
import "./picture_viewer.jsx"; // a sent picture opens over the page

const UPLOAD_URL = "/api/chat/attachments";
const PAGE = "composer"; // the scope that takes what is dropped or pasted outside any form

// The uploaded files' ids, in order: what the form sends.
const doneIds = (items) => items.filter((it) => it.status === "done").map((it) => it.id);

// The files of one form (its scope): its button, its tray and its listeners share them.
const makeStore = () => {
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
    // The form closed (an edit saved or cancelled): its files go with it.
    clear() {
      items.forEach((x) => {
        if (x.xhr) x.xhr.abort();
        if (x.preview) URL.revokeObjectURL(x.preview);
      });
      items = [];
      waitingForm = null;
      changed();
    },
  };
  return api;
};

// One store per scope and page (kept on the window: a second copy of this module shares
// them). The composer's is `window.agentChatAttach`, whose chips state/page_scripts.py
// removes once their message is sent.
const storeOf = (scope) => {
  if (typeof window === "undefined") return null;
  const all = (window.agentChatAttachStores = window.agentChatAttachStores || {});
  if (!all[scope]) all[scope] = makeStore();
  return all[scope];
};

if (typeof window !== "undefined") window.agentChatAttach = storeOf(PAGE);

const useItems = (store) => {
  const [items, setItems] = useState(store ? store.items() : []);
  useEffect(() => store.subscribe(setItems), [store]);
  return items;
};

// The composer's test ids as they were; another scope's are prefixed ("edit-attach-button").
const testId = (scope, name) => (scope === PAGE ? name : `${scope}-${name}`);

// Whether the event happened in another scope's form (the composer leaves it to that form).
const inOtherForm = (e, form) => {
  const other = e.target && e.target.closest && e.target.closest("form[data-attach-scope]");
  return Boolean(other && other !== form);
};

const size = (bytes) => {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
};

const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");

// The paperclip: a file picker for several files (the input has no name, so the form never
// carries the files themselves).
export function AttachButton({ label, scope = PAGE }) {
  const store = storeOf(scope);
  const input = useRef(null);
  return (
    <span className="attach-button-wrap">
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid={testId(scope, "attach-input")}
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
        data-testid={testId(scope, "attach-button")}
        onClick={() => input.current && input.current.click()}
      >
        <svg width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
          <path d="m21.44 11.05-9.19 9.19a6 6 0 0 1-8.49-8.49l8.57-8.57A4 4 0 1 1 18 8.84l-8.59 8.57a2 2 0 0 1-2.83-2.83l8.49-8.48" />
        </svg>
      </button>
    </span>
  );
}

// The chips, the hidden field with the ids, and the drop and paste handling of its form
// (`scope`): the composer's takes what lands anywhere on the page outside another scope's
// form and keeps its chips from page to page; another's (an edit form) takes what lands on
// its own form and forgets its chips when the form closes.
export function AttachTray({ maxBytes, maxFiles, scope = PAGE }) {
  const store = storeOf(scope);
  const items = useItems(store);
  const [dragging, setDragging] = useState(false);
  const root = useRef(null);

  useEffect(() => {
    store.setLimits({ maxBytes, maxFiles });
  }, [store, maxBytes, maxFiles]);

  useEffect(() => {
    const form = root.current && root.current.closest("form");
    if (!form) return undefined;
    form.setAttribute("data-attach-scope", scope);
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
  }, [store, scope]);

  useEffect(() => {
    const form = root.current && root.current.closest("form");
    if (!form) return undefined;
    const page = scope === PAGE;
    const target = page ? window : form;
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
      if (!page || !inOtherForm(e, form)) store.add(Array.from(e.dataTransfer.files || []));
    };
    const paste = (e) => {
      const files = Array.from((e.clipboardData && e.clipboardData.files) || []);
      if (!files.length || (page && inOtherForm(e, form))) return;
      // The page's: in its own form or outside any field (not in a settings input, say).
      const t = e.target;
      const inField = t && t.closest && t.closest("input, textarea, [contenteditable]");
      if (inField && !form.contains(t)) return;
      store.add(files);
      if (!e.clipboardData.types.includes("text/plain")) e.preventDefault();
    };
    if (page) {
      window.addEventListener("dragenter", enter);
      window.addEventListener("dragleave", leave);
    }
    target.addEventListener("dragover", over);
    target.addEventListener("drop", drop);
    (page ? document : form).addEventListener("paste", paste);
    return () => {
      if (page) {
        window.removeEventListener("dragenter", enter);
        window.removeEventListener("dragleave", leave);
      } else store.clear();
      target.removeEventListener("dragover", over);
      target.removeEventListener("drop", drop);
      (page ? document : form).removeEventListener("paste", paste);
    };
  }, [store, scope]);

  const ids = doneIds(items);
  const failed = items.some((it) => it.status === "error");
  const waiting = store && store.waiting();
  return (
    <div ref={root} className="attach-tray" data-testid={testId(scope, "attach-tray")} data-count={items.length}>
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
        <div className="attach-note attach-note-error" data-testid={testId(scope, "attach-blocked")}>
          Remove the files marked in red to send.
        </div>
      ) : waiting ? (
        <div className="attach-note" data-testid={testId(scope, "attach-waiting")}>
          Sending when the uploads finish…
        </div>
      ) : null}
    </div>
  );
}
