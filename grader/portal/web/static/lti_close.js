// LTI Dynamic Registration: the registration is done; the LMS that opened this page closes it.
(function () {
  "use strict";
  if (!document.getElementById("registered")) return;
  (window.opener || window.parent).postMessage({ subject: "org.imsglobal.lti.close" }, "*");
})();
