// What the page frame does in the browser alone (components/layout.py mounts it once per page):
// - the sidebar as a drawer below 768 px: `data-drawer="open"` on <html> (React never
//   renders that element, so no re-render undoes it); assets/styles.css does the rest. The
//   menu button opens it; the backdrop, Esc, choosing a conversation or "New conversation"
//   close it.
// - the keyboard shortcuts, and the dialog `?` opens that lists them.
// Everything here finds the page's elements by their data-testid: no server round trip.
import React, { useEffect, useState } from "react";
import { Dialog, Flex, Kbd, Text, Button } from "@radix-ui/themes";

const PHONE = "(max-width: 767.98px)";
const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);

const isMac = () =>
  typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform || "");

function setDrawer(open) {
  const root = document.documentElement;
  if (open) root.dataset.drawer = "open";
  else delete root.dataset.drawer;
  document.querySelectorAll('[data-testid="sidebar-toggle"]').forEach((button) => {
    button.setAttribute("aria-expanded", open ? "true" : "false");
  });
}
const drawerOpen = () => document.documentElement.dataset.drawer === "open";
const isPhone = () => window.matchMedia(PHONE).matches;

function isTyping(target) {
  if (!target || !target.closest) return false;
  return Boolean(target.closest("input, textarea, select, [contenteditable='true'], [role='textbox']"));
}
const isComposer = (target) =>
  Boolean(target && target.matches && target.matches('[data-testid="composer-input"], #composer'));
// A dialog, menu or list box is open: its own Esc handling goes first.
const overlayOpen = () =>
  Boolean(document.querySelector("[role='dialog'], [role='alertdialog'], [role='menu'], [role='listbox']"));

function focusSearch() {
  if (isPhone()) setDrawer(true);
  requestAnimationFrame(() => {
    const found = byTestId("session-search");
    const input = found && (found.matches("input") ? found : found.querySelector("input"));
    if (input) {
      input.focus();
      input.select();
    }
  });
}

function editLastMessage() {
  const users = document.querySelectorAll('[data-testid="message-user"]');
  const last = users[users.length - 1];
  const edit = last && last.querySelector('[data-testid="edit-message"]');
  if (!edit) return false;
  edit.click();
  return true;
}

// The actions, and what the dialog lists: [keys, what it does].
function shortcutRows() {
  const mod = isMac() ? "⌘" : "Ctrl";
  return [
    [[mod, "K"], "Search conversations"],
    [[mod, "Shift", "O"], "New conversation"],
    [["Esc"], "Stop the answer being written"],
    [["↑"], "Edit your last message (in an empty message box)"],
    [["Enter"], "Send the message"],
    [["Shift", "Enter"], "New line in the message"],
    [["?"], "Show these shortcuts"],
  ];
}

function onKeyDown(event, openHelp) {
  if (event.defaultPrevented || event.isComposing) return;
  const mod = event.ctrlKey || event.metaKey;
  const key = event.key;
  if (mod && !event.shiftKey && !event.altKey && (key === "k" || key === "K")) {
    event.preventDefault();
    focusSearch();
  } else if (mod && event.shiftKey && !event.altKey && (key === "o" || key === "O")) {
    event.preventDefault();
    const button = byTestId("new-session");
    if (button) button.click();
  } else if (key === "Escape" && !mod) {
    if (overlayOpen()) return; // a dialog or menu closes first
    if (drawerOpen() && isPhone()) {
      setDrawer(false);
      event.preventDefault();
      return;
    }
    if (isTyping(event.target) && !isComposer(event.target)) return; // e.g. rename keeps it
    const stop = byTestId("stop-button");
    if (stop) {
      event.preventDefault();
      stop.click();
    }
  } else if (key === "ArrowUp" && !mod && !event.shiftKey && !event.altKey) {
    if (isComposer(event.target) && event.target.value === "" && editLastMessage()) {
      event.preventDefault();
    }
  } else if (key === "?" && !mod && !isTyping(event.target) && !overlayOpen()) {
    event.preventDefault();
    openHelp();
  }
}

function onClick(event, openHelp) {
  const target = event.target;
  if (!target || !target.closest) return;
  if (target.closest('[data-testid="sidebar-toggle"]')) {
    const open = !drawerOpen();
    setDrawer(open);
    // Focus goes into the drawer (its close button), and back to the menu button after.
    if (open) requestAnimationFrame(() => { const b = byTestId("sidebar-close"); if (b) b.focus(); });
  } else if (target.closest('[data-testid="sidebar-close"], .sidebar-backdrop')) {
    setDrawer(false);
    const toggle = document.querySelector('.main-pane [data-testid="sidebar-toggle"]');
    if (toggle) toggle.focus();
  } else if (target.closest('[data-testid="shortcuts-button"]')) {
    openHelp();
  } else if (
    drawerOpen() &&
    target.closest('.sidebar a[href], .sidebar [data-testid="new-session"], .sidebar [data-testid="search-result"]')
  ) {
    setDrawer(false); // a conversation chosen, or a new one: show it
  }
}

function Keys({ keys }) {
  return (
    <Flex gap="1" align="center" wrap="nowrap">
      {keys.map((key, index) => (
        <Kbd key={index} size="2">{key}</Kbd>
      ))}
    </Flex>
  );
}

export function FrameBehaviour() {
  const [help, setHelp] = useState(false);
  useEffect(() => {
    setDrawer(false); // closed on every page the app opens
    const openHelp = () => setHelp(true);
    const keys = (event) => onKeyDown(event, openHelp);
    const clicks = (event) => onClick(event, openHelp);
    document.addEventListener("keydown", keys);
    document.addEventListener("click", clicks);
    return () => {
      document.removeEventListener("keydown", keys);
      document.removeEventListener("click", clicks);
    };
  }, []);
  return (
    <>
      <div className="sidebar-backdrop" aria-hidden="true" />
      <Dialog.Root open={help} onOpenChange={setHelp}>
        <Dialog.Content maxWidth="460px" data-testid="shortcuts-dialog">
          <Dialog.Title>Keyboard shortcuts</Dialog.Title>
          <Dialog.Description size="2" color="gray" mb="3">
            They work anywhere in the app, except “?” while you type.
          </Dialog.Description>
          <Flex direction="column" gap="2">
            {shortcutRows().map(([keys, what]) => (
              <Flex key={what} justify="between" align="center" gap="4" data-testid="shortcut-row">
                <Text size="2">{what}</Text>
                <Keys keys={keys} />
              </Flex>
            ))}
          </Flex>
          <Flex justify="end" mt="4">
            <Dialog.Close>
              <Button variant="soft" color="gray">Close</Button>
            </Dialog.Close>
          </Flex>
        </Dialog.Content>
      </Dialog.Root>
    </>
  );
}
