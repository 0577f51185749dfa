// The annotation queue: "n" opens the next task that needs your work.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    const target = event.target;
    const typing = target.closest && target.closest("input, textarea, select, [contenteditable]");
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "n") {
      event.preventDefault();
      document.getElementById("next-task").click();
    }
  });
})();
