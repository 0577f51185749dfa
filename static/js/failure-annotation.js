// Failure annotation on the trajectory page: d marks the current step (as j / k chose it) as the
// decisive one and moves to the failure type; Esc leaves a field.
(function () {
  "use strict";
  var form = document.getElementById("failure-form");
  if (!form) return;
  var step = document.getElementById("failure-step");

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest("input, textarea, select")) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.key !== "d") return;
    var current = document.querySelector(".tj-step.current") || document.querySelector(".tj-step");
    if (!current) return;
    event.preventDefault();
    step.value = current.id.replace("step-", "");
    document.getElementById("failure-type").focus();
  });
})();
