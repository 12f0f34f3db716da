// Live update of a submission's page: while it waits or is graded, ask for its JSON every
// second and reload the page once the status changes (without JavaScript, a reload shows it).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const section = document.getElementById("submission");
  if (!section) return;
  const shown = section.dataset.status;
  if (shown !== "queued" && shown !== "running") return;
  const poll = async () => {
    try {
      const answer = await fetch(location.href, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (answer.ok && (await answer.json()).status !== shown) {
        location.reload();
        return;
      }
    } catch (e) {
      // the server restarting: try again
    }
    setTimeout(poll, 1000);
  };
  setTimeout(poll, 1000);
});

// Live update of an arena page (an engine's checks, a test, a game): while it is not settled,
// ask for its JSON every second and reload the page once its "live" value changes.
document.addEventListener("DOMContentLoaded", () => {
  const section = document.querySelector("[data-live]");
  if (!section || section.dataset.settled === "true") return;
  const shown = section.dataset.live;
  const poll = async () => {
    try {
      const answer = await fetch(location.href, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (answer.ok && (await answer.json()).live !== shown) {
        location.reload();
        return;
      }
    } catch (e) {
      // the server restarting: try again
    }
    setTimeout(poll, 1000);
  };
  setTimeout(poll, 1000);
});
