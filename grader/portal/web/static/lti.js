// The LTI deep-linking answer: post the signed response to the platform at once (without
// JavaScript, the page's button posts it).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("lti-return");
  if (form) form.submit();
});
