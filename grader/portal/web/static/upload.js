// Drag-and-drop upload on an assignment's page: a file dropped on the form's area becomes the
// file input's choice (the input stays, for the keyboard and for browsers without JavaScript).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const area = document.getElementById("drop");
  const input = area && area.querySelector("input[type=file]");
  if (!input) return;
  document.getElementById("drop-hint").hidden = false;
  const over = (on) => (event) => {
    event.preventDefault();
    area.classList.toggle("over", on);
  };
  area.addEventListener("dragenter", over(true));
  area.addEventListener("dragover", over(true));
  area.addEventListener("dragleave", over(false));
  area.addEventListener("drop", (event) => {
    over(false)(event);
    if (event.dataTransfer && event.dataTransfer.files.length) {
      input.files = event.dataTransfer.files;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    }
  });
});
