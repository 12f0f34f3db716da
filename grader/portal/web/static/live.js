// Live update of a submission's page: while it waits or is graded, listen to its status
// (server-sent events: the browser connects again by itself if the server restarts) and reload
// the page once the status changes; put each new standing (its place on the queue and the
// estimate, or its tests done) in place (without JavaScript, a reload shows both).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const section = document.getElementById("submission");
  if (!section) return;
  const shown = section.dataset.status;
  if (shown !== "queued" && shown !== "running") return;
  const events = new EventSource(location.pathname + "/events");
  events.addEventListener("standing", (message) => {
    const standing = document.getElementById("standing");
    if (standing) standing.textContent = message.data;
  });
  events.onmessage = (message) => {
    if (message.data !== shown) {
      events.close();
      location.reload();
    }
  };
});

// Live update of an arena page (an engine's checks, a test, a game): while its section is not
// settled, ask for the page every second and put each part marked data-live whose value
// changed (the section; on an engine's page, the form that starts a test too) in place of the
// old one: no reload, so a move or a finished game appears where it is. Without JavaScript,
// a reload shows the same.
document.addEventListener("DOMContentLoaded", () => {
  const first = document.querySelector("section[data-live]");
  if (!first || first.dataset.settled === "true") return;
  const poll = async () => {
    try {
      const answer = await fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" });
      if (answer.ok) {
        const fresh = new DOMParser().parseFromString(await answer.text(), "text/html");
        for (const shown of document.querySelectorAll("[data-live][id]")) {
          const part = fresh.getElementById(shown.id);
          if (part && part.dataset.live !== shown.dataset.live) shown.replaceWith(document.adoptNode(part));
        }
        if (fresh.getElementById(first.id)?.dataset.settled === "true") return;
      }
    } catch (e) {
      // the server restarting: try again
    }
    setTimeout(poll, 1000);
  };
  setTimeout(poll, 1000);
});
