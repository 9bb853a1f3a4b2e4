// Browser notifications and a count in the tab title for conversations that finished or ask
// something while the person looked elsewhere. Opt-in (settings page): the choice lives in
// this browser (localStorage), the permission is the browser's.
(function () {
  const KEY = "agentChatNotify";
  const base = () => document.title.replace(/^\(\d+\) /, "");
  window.agentChatNotify = {
    enabled() {
      return (
        localStorage.getItem(KEY) === "on" &&
        "Notification" in window &&
        Notification.permission === "granted"
      );
    },
    // Ask the browser, remember the answer; returns "on" or why not.
    async enable() {
      if (!("Notification" in window)) return "This browser has no notifications.";
      const permission = await Notification.requestPermission();
      localStorage.setItem(KEY, permission === "granted" ? "on" : "off");
      return permission === "granted" ? "on" : "The browser did not allow notifications.";
    },
    disable() {
      localStorage.setItem(KEY, "off");
      return "off";
    },
    // How many conversations other than this one are waiting or finished unseen.
    count(n) {
      document.title = n > 0 ? `(${n}) ${base()}` : base();
    },
    notify(title, body, url) {
      if (!this.enabled()) return;
      const note = new Notification(title, { body, tag: url });
      note.onclick = () => {
        window.focus();
        window.location.assign(url);
        note.close();
      };
    },
  };
})();
