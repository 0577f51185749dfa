// Outcome grading on the trajectory page, by keyboard as in the judge audit: c correct,
// p partially correct, i incorrect (each submits, with the note), n writes a note, Esc leaves it.
(function () {
  "use strict";
  var form = document.getElementById("grade-form");
  if (!form) return;
  var note = document.getElementById("grade-note");

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest("input, textarea, select")) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.key === "n") {
      event.preventDefault();
      note.focus();
      return;
    }
    var button = form.querySelector('button[data-key="' + event.key + '"]');
    if (!button) return;
    event.preventDefault();
    form.requestSubmit(button);
  });
})();
