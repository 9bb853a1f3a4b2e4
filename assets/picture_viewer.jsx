// A sent picture (components/message.py, `data-view="picture"`) opens over the page, full
// size; Escape, a click or the × closes it. Its link stays the download (middle click).
// Set up once per page (a second copy of this module finds it done).
if (typeof window !== "undefined" && !window.agentChatPictureViewer) {
  window.agentChatPictureViewer = true;
  const closeViewer = () => {
    const open = document.querySelector(".picture-viewer");
    if (open) open.remove();
  };
  const view = (url, name) => {
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
      view(a.getAttribute("href"), a.getAttribute("data-name") || "");
    },
    true,
  );
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") closeViewer();
  });
}
