// The judge audit: one key per verdict. c confirms, o overrules, j/k (or arrows) move, n adds a note.
(function () {
  "use strict";
  const items = Array.from(document.querySelectorAll(".audit-item"));
  if (!items.length) return;
  let current = 0;

  function select(index) {
    current = Math.max(0, Math.min(index, items.length - 1));
    items.forEach((item, position) => item.classList.toggle("current", position === current));
    items[current].focus({ preventScroll: true });
    items[current].scrollIntoView({ block: "nearest" });
  }

  function nextOpen(from) {
    for (let index = from + 1; index < items.length; index += 1) {
      if (!items[index].classList.contains("done")) return index;
    }
    return from;
  }

  async function send(item, verdict) {
    const state = item.querySelector(".audit-state");
    const body = new FormData(item);
    body.set("verdict", verdict);
    state.className = "audit-state save-state saving";
    state.textContent = "Saving…";
    let response;
    try {
      response = await fetch(item.action, {
        method: "POST", body: body, credentials: "same-origin", headers: { "Accept": "application/json" },
      });
    } catch (error) {
      state.className = "audit-state save-state error";
      state.textContent = "Not saved: the server could not be reached.";
      return;
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      state.className = "audit-state save-state error";
      state.textContent = "Not saved: " + (data.detail || response.status);
      return;
    }
    item.classList.add("done");
    state.className = "audit-state save-state saved";
    state.textContent = (verdict === "confirm" ? "Confirmed" : "Overruled") + " · human says " +
      (data.human_score >= 0.5 ? "equivalent" : "not equivalent");
    if (items.indexOf(item) === current) select(nextOpen(current));
  }

  items.forEach((item) => {
    item.addEventListener("submit", (event) => {
      event.preventDefault();
      send(item, event.submitter ? event.submitter.value : "confirm");
    });
    item.addEventListener("focusin", () => {
      current = items.indexOf(item);
      items.forEach((other) => other.classList.toggle("current", other === item));
    });
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target.closest("input, textarea, select");
    if (typing) {
      if (event.key === "Escape") items[current].focus();
      return;
    }
    const actions = {
      c: () => send(items[current], "confirm"),
      o: () => send(items[current], "overrule"),
      j: () => select(current + 1),
      ArrowDown: () => select(current + 1),
      k: () => select(current - 1),
      ArrowUp: () => select(current - 1),
      n: () => items[current].querySelector(".audit-note").focus(),
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });

  select(0);
})();
