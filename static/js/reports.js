// Filter forms marked "autosubmit" apply a choice as soon as it is made; the button stays for keyboards without JS.
(function () {
  document.querySelectorAll("form.autosubmit select").forEach((select) => {
    select.addEventListener("change", () => select.form.submit());
  });
})();

// The leaderboard's columns: the reader picks which to show; the choice is kept in this browser.
(function () {
  "use strict";
  var table = document.getElementById("leaderboard");
  var chooser = document.getElementById("column-chooser");
  if (!table || !chooser) return;
  var KEY = "trajscope.leaderboard.hidden-columns";
  var defaults = (table.dataset.defaultHidden || "").split(" ").filter(Boolean);
  var boxes = Array.prototype.slice.call(chooser.querySelectorAll("input[type=checkbox]"));

  function stored() {
    try {
      var value = JSON.parse(localStorage.getItem(KEY));
      return Array.isArray(value) ? value : null;
    } catch (error) {
      return null;
    }
  }

  function apply(hidden) {
    boxes.forEach(function (box) {
      var show = hidden.indexOf(box.value) < 0;
      box.checked = show;
      var selector = '[data-col="' + box.value + '"], [data-metric="' + box.value + '"]';
      table.querySelectorAll(selector).forEach(function (cell) { cell.hidden = !show; });
    });
  }

  function chosen() {
    return boxes.filter(function (box) { return !box.checked; }).map(function (box) { return box.value; });
  }

  boxes.forEach(function (box) {
    box.addEventListener("change", function () {
      var hidden = chosen();
      try { localStorage.setItem(KEY, JSON.stringify(hidden)); } catch (error) { /* private mode: not kept */ }
      apply(hidden);
    });
  });
  document.getElementById("columns-reset").addEventListener("click", function () {
    try { localStorage.removeItem(KEY); } catch (error) { /* nothing kept */ }
    apply(defaults);
  });
  apply(stored() || defaults);
})();

// A judge mark's note is written once, under the leaderboard; hovering a mark shows it too.
(function () {
  "use strict";
  var table = document.getElementById("leaderboard");
  if (!table) return;
  table.addEventListener("mouseover", function (event) {
    var mark = event.target.closest(".rp-judge-mark[aria-describedby]");
    if (!mark || mark.title) return;
    var note = document.getElementById(mark.getAttribute("aria-describedby"));
    if (note) mark.title = note.textContent;
  });
})();
