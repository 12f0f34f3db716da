// The class table without a reload: the filter form's fields hide the rows they leave out as
// they are typed, and a column's heading sorts by it (again: the other way), within the page of
// students shown. Without JavaScript, the same form and headings ask the server (GET
// /class?q=...&sort=...&page=...); with several pages, the Filter button asks it too.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const table = document.getElementById("class");
  const form = document.getElementById("filter");
  if (!table || !form) return;
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const total = rows.length;
  const shown = document.getElementById("shown");
  const paged = Number(form.dataset.pages) > 1;
  const apply = () => {
    const q = form.elements.q.value.trim().toLowerCase();
    const missing = form.elements.missing.checked;
    const late = form.elements.late.checked;
    let n = 0;
    for (const row of rows) {
      const keep = (!q || row.cells[0].textContent.toLowerCase().includes(q)) &&
        (!missing || row.classList.contains("m")) && (!late || row.classList.contains("l"));
      row.hidden = !keep;
      if (keep) n += 1;
    }
    shown.textContent = paged ? `${n} of the ${total} students on this page` : `${n} of ${total} students`;
  };
  form.addEventListener("input", apply);
  form.addEventListener("submit", (event) => {
    if (paged) return; // the server filters the whole class
    event.preventDefault();
    apply();
  });
  const value = (row, i) => {
    const cell = row.cells[i];
    if (i === 0) return cell.textContent.toLowerCase();
    const number = parseFloat(cell.textContent.split("→").pop());
    return Number.isNaN(number) ? -1 : number;
  };
  const heads = Array.from(table.tHead.rows[0].cells);
  heads.forEach((head, i) => {
    const link = head.querySelector("a.sort");
    if (!link) return;
    link.setAttribute("role", "button");
    link.addEventListener("click", (event) => {
      event.preventDefault();
      const up = head.getAttribute("aria-sort") !== "ascending";
      for (const other of heads) other.setAttribute("aria-sort", "none");
      head.setAttribute("aria-sort", up ? "ascending" : "descending");
      const sorted = rows.slice().sort((a, b) => {
        const x = value(a, i), y = value(b, i);
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
      });
      body.append(...sorted);
    });
  });
});
