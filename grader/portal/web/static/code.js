// The code viewer for staff: a click on a line's number (still its anchor) also puts that file
// and line in the comment form and moves to its text; without JavaScript, the form's fields
// are filled by hand.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("comment-form");
  if (!form) return;
  document.querySelectorAll("table.code").forEach((table) => {
    table.addEventListener("click", (event) => {
      const link = event.target.closest("td.ln a");
      if (!link) return;
      form.elements.path.value = table.dataset.path;
      form.elements.line.value = link.textContent.trim();
      form.elements.text.focus({ preventScroll: true });
    });
  });
});
