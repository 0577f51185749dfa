// Keyboard navigation between the steps of a trajectory: j / ArrowRight next, k / ArrowLeft
// previous, t opens or closes the current step's accessibility tree.
(function () {
  "use strict";
  var steps = Array.prototype.slice.call(document.querySelectorAll(".tj-step"));
  if (!steps.length) return;
  var current = -1;

  function show(position) {
    if (position < 0 || position >= steps.length) return;
    if (current >= 0) steps[current].classList.remove("current");
    current = position;
    var step = steps[current];
    step.classList.add("current");
    step.focus({ preventScroll: true });
    step.scrollIntoView({ block: "start" });
    history.replaceState(null, "", "#" + step.id);
  }

  function typing(target) {
    return target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName);
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
    if (event.key === "j" || event.key === "ArrowRight") {
      show(current + 1);
    } else if (event.key === "k" || event.key === "ArrowLeft") {
      show(current < 0 ? 0 : current - 1);
    } else if (event.key === "t" && current >= 0) {
      var tree = steps[current].querySelector("details");
      if (tree) tree.open = !tree.open;
    } else {
      return;
    }
    event.preventDefault();
  });

  var wanted = location.hash ? document.getElementById(location.hash.slice(1)) : null;
  if (wanted && steps.indexOf(wanted) >= 0) show(steps.indexOf(wanted));
})();
