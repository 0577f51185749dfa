// The gold editor: an ordered list of gold steps, recorded from the keyboard.
//
// Every edit is copied to localStorage at once and saved to the server shortly after (drafts
// autosave); a failed save keeps the copy, and a reload restores it. Saves carry the version
// the edits were based on: when someone else saved in between, the server answers 409 and the
// conflict dialog shows both versions side by side. Nothing typed is dropped silently.
(function () {
  "use strict";

  const boot = JSON.parse(document.getElementById("gold-editor-data").textContent);
  const ACTION_TYPES = ["click", "type", "hover", "press", "scroll", "select", "goto", "go_back", "go_forward",
    "new_tab", "tab_focus", "close_tab", "stop"];
  const OWNER_EDITABLE = ["draft", "changes_requested"];
  const AUTOSAVE_DELAY_MS = 1200;
  const RETRY_DELAY_MS = 10000;

  const $ = (id) => document.getElementById(id);

  // Sentence of a structured step; annotation/sentences.py writes the same one on the server.
  function target(role, name) {
    if (name && role) return "the '" + name + "' " + role;
    if (name) return "'" + name + "'";
    if (role) return "the " + role;
    return "the element";
  }

  function stepSentence(actionType, role, name, value) {
    role = (role || "").trim();
    name = (name || "").trim();
    value = (value || "").trim();
    const on = target(role, name);
    switch (actionType) {
      case "click": return "Click on " + on;
      case "hover": return "Hover over " + on;
      case "type": return "Type '" + value + "' into " + on;
      case "select": return "Select " + on + " and choose '" + value + "'";
      case "press": return "Press " + (value || "Enter");
      case "scroll": return "Scroll " + (value || "down");
      case "goto": return value ? "Go to " + value : "Go to a URL";
      case "go_back": return "Go back to the previous page";
      case "go_forward": return "Go forward to the next page";
      case "new_tab": return "Open a new tab";
      case "tab_focus": return value ? "Switch to tab " + value : "Switch tab";
      case "close_tab": return "Close the current tab";
      case "stop": return value ? "Stop and answer '" + value + "'" : "Stop";
      default: return "";
    }
  }

  function el(tag, props, children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    (children || []).forEach((child) => node.append(child));
    return node;
  }

  // Server communication ------------------------------------------------------------------------

  function csrfToken() {
    const input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  async function api(method, url, body) {
    const response = await fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try {
      data = await response.json();
    } catch (error) {
      data = null;
    }
    return { ok: response.ok, status: response.status, data: data };
  }

  const goldUrl = (id) => boot.urls.gold_detail.replace(/\/0\/$/, "/" + id + "/");

  // State ---------------------------------------------------------------------------------------

  const state = {
    gold: boot.gold, // the gold as the server last returned it (null until the first save)
    baseVersion: boot.gold ? boot.gold.version : 0, // the version local edits are based on
    steps: [],
    cannotComplete: false,
    reason: "",
    finalAnswer: "",
    editSeq: 0, // bumped on every edit
    savedSeq: 0, // editSeq of the last successful save
    savedContent: "", // JSON of the content last loaded from or saved to the server
    inFlight: null,
    conflict: null,
    current: 0,
    timer: null,
    reviewEditing: false, // a reviewer pressed "Edit" on someone else's gold
  };

  const ownGold = () => !state.gold || state.gold.annotator === boot.user;

  // A reviewer reads someone else's gold; it becomes editable only through the explicit "Edit".
  const mayEditOthers = () => boot.is_reviewer && !ownGold();

  function editable() {
    if (!state.gold) return true;
    if (!ownGold()) return mayEditOthers() && state.reviewEditing;
    return boot.is_reviewer || OWNER_EDITABLE.includes(state.gold.status);
  }

  function canSubmit() {
    return !state.gold || (state.gold.annotator === boot.user && OWNER_EDITABLE.includes(state.gold.status));
  }

  function stepFrom(record) {
    return {
      text: record.text || "",
      label: record.label || "",
      action_type: record.action_type || "",
      element_role: record.element_role || "",
      element_name: record.element_name || "",
      value: record.value || "",
      structured: Boolean(record.action_type),
    };
  }

  function contentFromGold(gold) {
    return {
      steps: gold ? gold.steps.map(stepFrom) : [],
      cannot_complete: gold ? gold.cannot_complete : false,
      cannot_complete_reason: gold ? gold.cannot_complete_reason : "",
      final_answer: gold ? gold.final_answer : "",
    };
  }

  // What is sent, backed up and compared: blank steps are not steps yet.
  function serialize(steps, cannotComplete, reason, finalAnswer) {
    return {
      steps: steps
        .filter((step) => step.text.trim() || step.action_type)
        .map((step) => ({
          text: step.action_type ? stepSentence(step.action_type, step.element_role, step.element_name, step.value)
            : step.text.trim(),
          label: step.label,
          action_type: step.action_type,
          element_role: step.element_role,
          element_name: step.element_name,
          value: step.value,
        })),
      cannot_complete: cannotComplete,
      cannot_complete_reason: cannotComplete ? reason : "",
      final_answer: finalAnswer,
    };
  }

  const content = () => serialize(state.steps, state.cannotComplete, state.reason, state.finalAnswer);

  function storedContent(gold) {
    const data = contentFromGold(gold);
    return serialize(data.steps, data.cannot_complete, data.cannot_complete_reason, data.final_answer);
  }

  function applyContent(data) {
    state.steps = data.steps.map(stepFrom);
    state.cannotComplete = data.cannot_complete;
    state.reason = data.cannot_complete_reason || "";
    state.finalAnswer = data.final_answer || "";
    if (!state.steps.length && editable()) state.steps.push(stepFrom({}));
    renderAll();
  }

  const sameContent = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const isEmpty = (data) => !data.steps.length && !data.cannot_complete && !data.final_answer;

  // Local backup --------------------------------------------------------------------------------

  const backupKey = (gold) => "trajscope:gold:" + boot.user + ":" + (gold ? "g" + gold.id : "t" + boot.task.id);

  function writeBackup() {
    try {
      localStorage.setItem(backupKey(state.gold), JSON.stringify({
        version: state.baseVersion, savedAt: Date.now(), content: content(),
      }));
    } catch (error) {
      setSaveState("error", "This browser cannot keep a local copy (" + error.name + "): save often.");
    }
  }

  function readBackup(key) {
    try {
      return JSON.parse(localStorage.getItem(key) || "null");
    } catch (error) {
      return null;
    }
  }

  function clearBackup(gold) {
    localStorage.removeItem(backupKey(gold));
  }

  function restoreBackup() {
    // A copy made before the user's own gold existed is looked for too: its first save may never
    // have arrived.
    const own = !state.gold || state.gold.annotator === boot.user;
    const keys = [state.gold ? backupKey(state.gold) : null, own ? backupKey(null) : null].filter(Boolean);
    for (const key of keys) {
      const backup = readBackup(key);
      if (!backup || !backup.content) continue;
      if (sameContent(backup.content, storedContent(state.gold))) {
        localStorage.removeItem(key);
        continue;
      }
      if (key !== backupKey(state.gold)) localStorage.removeItem(key);
      applyContent(backup.content);
      state.baseVersion = backup.version;
      state.editSeq += 1;
      writeBackup();
      const saved = new Date(backup.savedAt);
      const pad = (n) => String(n).padStart(2, "0");
      // The site's one date format: 2026-05-01 14:03.
      const when = saved.getFullYear() + "-" + pad(saved.getMonth() + 1) + "-" + pad(saved.getDate()) + " " +
        pad(saved.getHours()) + ":" + pad(saved.getMinutes());
      $("restore-text").textContent = "Unsaved changes from " + when + " were restored from this browser.";
      $("restore-banner").hidden = false;
      scheduleAutosave(AUTOSAVE_DELAY_MS);
      return;
    }
  }

  // Saving --------------------------------------------------------------------------------------

  function setSaveState(kind, text) {
    const node = $("save-state");
    node.className = "save-state " + kind;
    node.textContent = text;
    node.title = text;
  }

  function changed() {
    state.editSeq += 1;
    writeBackup();
    if (ownGold()) {
      setSaveState("dirty", "Unsaved changes");
      scheduleAutosave(AUTOSAVE_DELAY_MS);
    } else {
      // A reviewer's change to someone else's gold is saved when they say so, and recorded as theirs.
      setSaveState("dirty", "Unsaved changes · Ctrl+S saves them as your edit");
    }
  }

  function scheduleAutosave(delay) {
    clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      if (state.editSeq !== state.savedSeq && !state.conflict) save();
    }, delay);
  }

  function showError(text) {
    const banner = $("error-banner");
    banner.textContent = text;
    banner.hidden = !text;
  }

  // The server names fields by their keys (steps[2].text); people know them by what the page calls them.
  const FIELD_LABELS = { cannot_complete_reason: "Reason it cannot be completed", cannot_complete: "Cannot complete",
    final_answer: "Final answer", steps: "Steps", text: "text", action_type: "action type",
    element_role: "element role", element_name: "element name", value: "value", version: "Version",
    requirements: "Requirements", non_field_errors: "Gold" };

  function fieldLabel(path) {
    const step = /^steps\[(\d+)\]\.(\w+)$/.exec(path);
    if (step) return "Step " + (Number(step[1]) + 1) + ", " + (FIELD_LABELS[step[2]] || step[2].replace(/_/g, " "));
    return FIELD_LABELS[path] || path.replace(/_/g, " ");
  }

  function describeErrors(data) {
    if (!data) return "the server answered without details";
    if (data.errors) return Object.entries(data.errors).map(([path, message]) => fieldLabel(path) + ": " + message).join("; ");
    if (data.detail) return data.detail;
    return JSON.stringify(data);
  }

  async function save(options) {
    options = options || {};
    if (!editable()) return true;
    if (state.conflict) {
      openConflict(state.conflict);
      return false;
    }
    while (state.inFlight) await state.inFlight.catch(() => null);
    const seq = state.editSeq;
    const data = content();
    const sent = JSON.stringify(data);
    if (!options.submit && (sent === state.savedContent || (!state.gold && isEmpty(data)))) {
      // Nothing the server does not already have (an empty step, an edit typed and undone).
      state.savedSeq = seq;
      clearBackup(state.gold);
      if (state.gold) setSaveState("saved", "All changes saved · version " + state.gold.version);
      return true;
    }
    const body = Object.assign({}, data, { submit: Boolean(options.submit) });
    const previousKey = backupKey(state.gold);
    if (state.gold) {
      body.version = state.baseVersion;
      state.inFlight = api("PUT", goldUrl(state.gold.id), body);
    } else {
      body.benchmark = boot.task.benchmark;
      body.task_id = boot.task.task_id;
      state.inFlight = api("POST", boot.urls.gold_list, body);
    }
    setSaveState("saving", options.submit ? "Submitting…" : "Saving…");
    let result;
    try {
      result = await state.inFlight;
    } catch (error) {
      setSaveState("error", "Not saved: the server could not be reached. Your changes are kept in this browser.");
      scheduleAutosave(RETRY_DELAY_MS);
      return false;
    } finally {
      state.inFlight = null;
    }
    if (result.ok) {
      state.gold = result.data;
      state.baseVersion = result.data.version;
      state.savedSeq = seq;
      state.savedContent = sent;
      if (previousKey !== backupKey(state.gold)) localStorage.removeItem(previousKey);
      if (state.editSeq === seq) clearBackup(state.gold);
      else writeBackup();
      showError("");
      updateMeta();
      setSaveState("saved", "Saved · version " + state.gold.version + (ownGold() ? "" : " · recorded as your edit"));
      return true;
    }
    if (result.status === 409 && result.data && result.data.code === "version_conflict") {
      openConflict(result.data.current);
      setSaveState("error", "Not saved: someone else saved this gold meanwhile.");
      return false;
    }
    const reason = describeErrors(result.data);
    showError("Not saved: " + reason);
    setSaveState("error", "Not saved. Your changes are kept in this browser.");
    if (result.status >= 500) scheduleAutosave(RETRY_DELAY_MS);
    return false;
  }

  async function saveEverything() {
    const results = await Promise.all([save(), saveRequirements()]);
    return results.every(Boolean);
  }

  function showReasonError(text) {
    const box = $("cannot-complete-reason");
    $("cannot-complete-reason-error").textContent = text;
    $("cannot-complete-reason-error").hidden = !text;
    if (text) box.setAttribute("aria-invalid", "true");
    else box.removeAttribute("aria-invalid");
  }

  async function submitAndNext() {
    if (!canSubmit()) {
      showError("Only the annotator who recorded this gold can submit it, while it is a draft.");
      return;
    }
    if (state.cannotComplete && !state.reason.trim()) {
      // Submitting needs the reason; say so where it is typed, instead of saving a draft without a word.
      const text = "Not submitted: say why the task cannot be completed.";
      showReasonError(text);
      showError(text);
      setSaveState("error", "Not submitted");
      $("cannot-complete-reason").focus();
      return;
    }
    if (!(await saveRequirements())) return;
    if (await save({ submit: true })) window.location.assign(boot.urls.next);
  }

  async function goNext() {
    if (await saveEverything()) window.location.assign(boot.urls.next);
  }

  // Conflict ------------------------------------------------------------------------------------

  function conflictList(node, steps) {
    node.replaceChildren(...steps.map((step) => el("li", { textContent: step.text })));
    if (!steps.length) node.replaceChildren(el("li", { className: "muted", textContent: "(no steps)" }));
  }

  function extras(data) {
    const parts = [];
    if (data.cannot_complete) parts.push("Cannot complete: " + (data.cannot_complete_reason || "(no reason)"));
    if (data.final_answer) parts.push("Final answer: " + data.final_answer);
    return parts.join(" · ");
  }

  function openConflict(current) {
    state.conflict = current;
    const yours = content();
    const theirs = storedContent(current);
    conflictList($("conflict-yours"), yours.steps);
    conflictList($("conflict-theirs"), theirs.steps);
    $("conflict-yours-extra").textContent = extras(yours);
    $("conflict-theirs-extra").textContent = extras(theirs);
    $("conflict-version").textContent = String(current.version);
    $("conflict-detail").textContent = "Version " + current.version + " by " + current.annotator +
      " (" + current.status.replace("_", " ") + ") was saved after you started editing version " +
      state.baseVersion + ". Choose which version to keep.";
    $("conflict").hidden = false;
    $("conflict-keep-mine").focus();
  }

  function closeConflict() {
    state.conflict = null;
    $("conflict").hidden = true;
  }

  $("conflict-keep-mine").addEventListener("click", () => {
    const current = state.conflict;
    const previousKey = backupKey(state.gold);
    state.gold = current;
    state.baseVersion = current.version;
    if (previousKey !== backupKey(current)) localStorage.removeItem(previousKey);
    writeBackup();
    closeConflict();
    state.editSeq += 1;
    state.savedContent = "";
    save();
    focusStep(state.current);
  });

  $("conflict-take-theirs").addEventListener("click", () => {
    const current = state.conflict;
    const previousKey = backupKey(state.gold);
    closeConflict();
    state.gold = current;
    state.baseVersion = current.version;
    localStorage.removeItem(previousKey);
    clearBackup(current);
    applyContent(contentFromGold(current));
    state.editSeq += 1;
    state.savedSeq = state.editSeq;
    state.savedContent = JSON.stringify(storedContent(current));
    updateMeta();
    setSaveState("saved", "Showing version " + current.version);
    focusStep(0);
  });

  // Rendering -----------------------------------------------------------------------------------

  function actionSelect(step) {
    const select = el("select", { className: "step-action", title: "Action type" });
    select.setAttribute("aria-label", "Action type");
    select.append(el("option", { value: "", textContent: "action…" }));
    ACTION_TYPES.forEach((type) => select.append(el("option", { value: type, textContent: type })));
    select.value = step.action_type;
    return select;
  }

  function field(className, value, placeholder, label) {
    const input = el("input", { type: "text", className: className, value: value, placeholder: placeholder });
    input.setAttribute("aria-label", label);
    return input;
  }

  function stepElement(step, index) {
    const item = el("li", { className: "step" + (step.structured ? " structured" : "") });
    item.dataset.index = String(index);
    const body = el("div", { className: "step-body" });
    if (step.structured) {
      const role = field("step-role", step.element_role, "role: link, button, textbox…", "Element role");
      role.setAttribute("list", "element-roles");
      body.append(
        el("div", { className: "step-fields" }, [
          actionSelect(step),
          role,
          field("step-name", step.element_name, "element name, e.g. REPORTS", "Element name"),
          field("step-value", step.value, "value: text, key, URL, direction…", "Value"),
        ]),
        el("div", { className: "sentence", textContent: sentenceOrHint(step) }),
      );
    } else {
      body.append(field("step-text", step.text, "Describe the step, e.g. Click on the 'REPORTS' link",
        "Step " + (index + 1)));
    }
    const tools = el("div", { className: "step-tools" }, [
      toolButton("mode", step.structured ? "Text" : "Structured", "Switch free text / structured (Alt+S)"),
      toolButton("up", "↑", "Move up (Alt+↑)"),
      toolButton("down", "↓", "Move down (Alt+↓)"),
      toolButton("delete", "✕", "Delete (Alt+Backspace)"),
    ]);
    item.append(el("span", { className: "step-number", textContent: String(index + 1) }), body);
    if (editable()) item.append(tools);
    if (!editable()) item.querySelectorAll("input, select").forEach((node) => { node.disabled = true; });
    return item;
  }

  function toolButton(action, text, title) {
    const button = el("button", { type: "button", className: "tool", textContent: text, title: title, tabIndex: -1 });
    button.dataset.action = action;
    return button;
  }

  function sentenceOrHint(step) {
    return step.action_type ? stepSentence(step.action_type, step.element_role, step.element_name, step.value)
      : "Choose an action type; the sentence is written from the fields.";
  }

  function renderSteps() {
    $("steps").replaceChildren(...state.steps.map(stepElement));
  }

  function renderMeta() {
    $("cannot-complete").checked = state.cannotComplete;
    $("cannot-complete-reason-field").hidden = !state.cannotComplete;
    $("cannot-complete-reason").value = state.reason;
    $("final-answer").value = state.finalAnswer;
    const readOnly = !editable();
    ["cannot-complete", "cannot-complete-reason", "final-answer"].forEach((id) => { $(id).disabled = readOnly; });
    document.querySelectorAll("[data-edit-only]").forEach((node) => { node.hidden = readOnly; });
    document.querySelectorAll("[data-submit-only]").forEach((node) => { node.hidden = !canSubmit(); });
    $("edit-button").hidden = !mayEditOthers() || state.reviewEditing;
    $("review-edit-note").hidden = !(mayEditOthers() && state.reviewEditing);
    $("read-only-note").hidden = editable() || !state.gold;
  }

  function startReviewEdit() {
    if (!mayEditOthers() || state.reviewEditing) return;
    state.reviewEditing = true;
    if (!state.steps.length) state.steps.push(stepFrom({}));
    renderAll();
    focusStep(0);
  }

  function updateMeta() {
    const status = state.gold ? state.gold.status : "none";
    const badge = $("gold-status");
    badge.className = "badge status-" + status;
    badge.textContent = status === "none" ? "No gold"
      : status.charAt(0).toUpperCase() + status.slice(1).replace("_", " ");
    if (state.gold) {
      $("gold-meta").textContent = "Recorded by " + state.gold.annotator + " · version " + state.gold.version +
        importRecord(state.gold);
    }
    const reviewVersion = $("review-version");
    if (reviewVersion && state.gold) reviewVersion.value = String(state.gold.version);
    renderMeta();
  }

  // Who imported the gold, on whose behalf, when and from which file (as the page renders it).
  function importRecord(gold) {
    if (!gold.source || gold.source === "web") return "";
    let text = " · imported from " + gold.source;
    if (gold.imported_by) {
      text += " by " + gold.imported_by;
      if (gold.imported_by !== gold.annotator) text += " on behalf of " + gold.annotator;
    } else if (gold.imported_at) {
      text += " by the operator (import_gold)";
    }
    if (gold.imported_at) text += " on " + gold.imported_at.slice(0, 16).replace("T", " ");
    return text;
  }

  function renderAll() {
    renderSteps();
    renderMeta();
  }

  function focusStep(index, selector) {
    if (!state.steps.length) return;
    index = Math.max(0, Math.min(index, state.steps.length - 1));
    state.current = index;
    const item = $("steps").children[index];
    const node = item.querySelector(selector || "input, select");
    if (node) node.focus();
  }

  // Step operations -----------------------------------------------------------------------------

  function addStep(at) {
    if (!editable()) return;
    at = Math.max(0, Math.min(at, state.steps.length));
    state.steps.splice(at, 0, stepFrom({}));
    renderSteps();
    focusStep(at);
    changed();
  }

  function moveStep(index, delta) {
    const to = index + delta;
    if (!editable() || to < 0 || to >= state.steps.length) return;
    const [step] = state.steps.splice(index, 1);
    state.steps.splice(to, 0, step);
    renderSteps();
    focusStep(to);
    changed();
  }

  function deleteStep(index, focusIndex) {
    if (!editable() || !state.steps.length) return;
    state.steps.splice(index, 1);
    if (!state.steps.length) state.steps.push(stepFrom({}));
    renderSteps();
    focusStep(focusIndex === undefined ? index : focusIndex);
    changed();
  }

  function toggleStructured(index) {
    if (!editable() || !state.steps[index]) return;
    const step = state.steps[index];
    step.structured = !step.structured;
    if (!step.structured && step.action_type) {
      // The sentence becomes free text the annotator can reword.
      step.text = stepSentence(step.action_type, step.element_role, step.element_name, step.value);
      step.action_type = "";
    }
    renderSteps();
    focusStep(index, step.structured ? ".step-action" : ".step-text");
    changed();
  }

  const FIELDS = { "step-text": "text", "step-action": "action_type", "step-role": "element_role",
    "step-name": "element_name", "step-value": "value" };

  function onStepInput(event) {
    const item = event.target.closest("li.step");
    const name = FIELDS[event.target.className];
    if (!item || !name) return;
    const step = state.steps[Number(item.dataset.index)];
    if (step[name] === event.target.value) return;
    step[name] = event.target.value;
    if (step.structured) {
      item.querySelector(".sentence").textContent = sentenceOrHint(step);
      if (step.action_type) {
        step.text = stepSentence(step.action_type, step.element_role, step.element_name, step.value);
      }
    }
    changed();
  }

  $("steps").addEventListener("input", onStepInput);
  $("steps").addEventListener("change", onStepInput);
  $("steps").addEventListener("focusin", (event) => {
    const item = event.target.closest("li.step");
    if (item) state.current = Number(item.dataset.index);
  });
  $("steps").addEventListener("click", (event) => {
    const button = event.target.closest("button.tool");
    if (!button) return;
    const index = Number(button.closest("li.step").dataset.index);
    ({
      mode: () => toggleStructured(index),
      up: () => moveStep(index, -1),
      down: () => moveStep(index, 1),
      delete: () => deleteStep(index),
    })[button.dataset.action]();
  });

  const reviewForm = $("review-form");
  if (reviewForm) {
    // A reviewer's own edits are saved first, so the verdict is on the version they see.
    reviewForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!(await saveEverything())) return;
      const decision = document.createElement("input");
      decision.type = "hidden";
      decision.name = "decision";
      decision.value = event.submitter ? event.submitter.value : "approved";
      reviewForm.append(decision);
      reviewForm.submit();
    });
  }

  $("add-step").addEventListener("click", () => addStep(state.steps.length));
  $("edit-button").addEventListener("click", () => startReviewEdit());
  $("save-button").addEventListener("click", () => saveEverything());
  $("submit-button").addEventListener("click", () => submitAndNext());
  $("next-button").addEventListener("click", (event) => {
    event.preventDefault();
    goNext();
  });
  $("cannot-complete").addEventListener("change", (event) => {
    state.cannotComplete = event.target.checked;
    $("cannot-complete-reason-field").hidden = !state.cannotComplete;
    if (!state.cannotComplete) showReasonError("");
    if (state.cannotComplete) $("cannot-complete-reason").focus();
    changed();
  });
  $("cannot-complete-reason").addEventListener("input", (event) => {
    state.reason = event.target.value;
    if (state.reason.trim()) showReasonError("");
    changed();
  });
  $("final-answer").addEventListener("input", (event) => {
    state.finalAnswer = event.target.value;
    changed();
  });
  $("discard-backup").addEventListener("click", () => {
    clearBackup(state.gold);
    $("restore-banner").hidden = true;
    state.baseVersion = state.gold ? state.gold.version : 0;
    applyContent(contentFromGold(state.gold));
    state.editSeq += 1;
    state.savedSeq = state.editSeq;
    setSaveState("saved", "Unsaved changes discarded");
  });

  // Requirements --------------------------------------------------------------------------------

  const requirements = {
    items: boot.requirements.slice(),
    loaded: boot.requirements.slice(),
    conflict: null,
  };
  const requirementsKey = "trajscope:requirements:" + boot.user + ":" + boot.task.id;

  function requirementsDirty() {
    return !sameContent(requirements.items.map((item) => item.trim()).filter(Boolean), requirements.loaded);
  }

  function renderRequirements(focusIndex) {
    const list = $("requirement-list");
    list.replaceChildren(...requirements.items.map((item, index) => {
      const input = field("requirement", item, "a phrase the answer must contain", "Requirement " + (index + 1));
      input.dataset.index = String(index);
      const remove = el("button", {
        type: "button", className: "tool", textContent: "✕", title: "Remove", tabIndex: -1,
      });
      remove.dataset.index = String(index);
      return el("li", {}, [input, remove]);
    }));
    if (focusIndex !== undefined && list.children[focusIndex]) list.children[focusIndex].querySelector("input").focus();
  }

  function setRequirementsState(kind, text) {
    const node = $("requirements-state");
    node.className = "save-state " + kind;
    node.textContent = text;
  }

  function requirementsChanged() {
    try {
      localStorage.setItem(requirementsKey, JSON.stringify({ items: requirements.items, loaded: requirements.loaded }));
    } catch (error) {
      setRequirementsState("error", "No local copy possible: save now.");
      return;
    }
    setRequirementsState("dirty", requirementsDirty() ? "Unsaved" : "");
  }

  async function saveRequirements() {
    if (!requirementsDirty()) return true;
    if (requirements.conflict) return false;
    setRequirementsState("saving", "Saving…");
    let result;
    try {
      result = await api("PUT", boot.urls.requirements, {
        requirements: requirements.items, expected: requirements.loaded,
      });
    } catch (error) {
      setRequirementsState("error", "Not saved (server unreachable); kept in this browser.");
      return false;
    }
    if (result.ok) {
      requirements.loaded = result.data.requirements.slice();
      requirements.items = result.data.requirements.slice();
      localStorage.removeItem(requirementsKey);
      $("requirements-source").textContent = "Annotator";
      renderRequirements();
      setRequirementsState("saved", "Saved");
      return true;
    }
    if (result.status === 409 && result.data && result.data.code === "version_conflict") {
      requirements.conflict = result.data.current;
      $("requirements-theirs").textContent = result.data.current.join(" · ") || "(none)";
      $("requirements-conflict").hidden = false;
      setRequirementsState("error", "Not saved: changed by someone else.");
      return false;
    }
    setRequirementsState("error", "Not saved: " + describeErrors(result.data));
    return false;
  }

  $("requirement-list").addEventListener("input", (event) => {
    requirements.items[Number(event.target.dataset.index)] = event.target.value;
    requirementsChanged();
  });
  $("requirement-list").addEventListener("click", (event) => {
    const button = event.target.closest("button.tool");
    if (!button) return;
    requirements.items.splice(Number(button.dataset.index), 1);
    renderRequirements();
    requirementsChanged();
  });
  $("requirement-list").addEventListener("keydown", (event) => {
    const index = Number(event.target.dataset.index);
    if (event.key === "Enter" && !event.altKey && !event.ctrlKey) {
      event.preventDefault();
      requirements.items.splice(index + 1, 0, "");
      renderRequirements(index + 1);
      requirementsChanged();
    } else if (event.key === "Backspace" && event.target.value === "" && requirements.items.length > 0) {
      event.preventDefault();
      requirements.items.splice(index, 1);
      renderRequirements(Math.max(0, index - 1));
      requirementsChanged();
    }
  });
  $("add-requirement").addEventListener("click", () => {
    requirements.items.push("");
    renderRequirements(requirements.items.length - 1);
  });
  $("save-requirements").addEventListener("click", () => saveRequirements());
  $("requirements-keep-mine").addEventListener("click", () => {
    requirements.loaded = requirements.conflict;
    requirements.conflict = null;
    $("requirements-conflict").hidden = true;
    saveRequirements();
  });
  $("requirements-take-theirs").addEventListener("click", () => {
    requirements.items = requirements.conflict.slice();
    requirements.loaded = requirements.conflict.slice();
    requirements.conflict = null;
    $("requirements-conflict").hidden = true;
    localStorage.removeItem(requirementsKey);
    renderRequirements();
    setRequirementsState("saved", "Showing theirs");
  });

  function restoreRequirements() {
    let backup = null;
    try {
      backup = JSON.parse(localStorage.getItem(requirementsKey) || "null");
    } catch (error) {
      backup = null;
    }
    if (!backup || sameContent(backup.items, requirements.loaded)) return;
    requirements.items = backup.items;
    // Edits based on an older list than the stored one come back as a conflict when saved.
    requirements.loaded = backup.loaded;
    setRequirementsState("dirty", "Unsaved changes restored from this browser");
  }

  // Keyboard ------------------------------------------------------------------------------------

  function toggleHelp(open) {
    const help = $("help");
    help.hidden = open === undefined ? !help.hidden : !open;
    if (!help.hidden) $("help-close").focus();
    else focusStep(state.current);
  }

  $("help-button").addEventListener("click", () => toggleHelp(true));
  $("help-close").addEventListener("click", () => toggleHelp(false));

  const isTyping = (node) => Boolean(node.closest && node.closest("input, textarea, select, [contenteditable]"));

  function stepIndexOf(node) {
    const item = node.closest && node.closest("#steps li.step");
    return item ? Number(item.dataset.index) : null;
  }

  document.addEventListener("keydown", (event) => {
    const ctrl = event.ctrlKey || event.metaKey;
    const helpKey = event.key === "F1" || ((ctrl || event.altKey) && (event.key === "/" || event.code === "Slash"));
    if (!$("help").hidden) {
      if (event.key === "Escape" || event.key === "?" || helpKey) {
        event.preventDefault();
        toggleHelp(false);
      }
      return;
    }
    if (!$("conflict").hidden) return; // the dialog's two buttons are the only way on
    if ((event.key === "?" && !isTyping(event.target)) || helpKey) {
      event.preventDefault();
      toggleHelp(true);
      return;
    }
    if (ctrl && !event.altKey && event.key.toLowerCase() === "s") {
      event.preventDefault();
      saveEverything();
      return;
    }
    if (ctrl && event.shiftKey && event.key === "Enter") {
      event.preventDefault();
      submitAndNext();
      return;
    }
    const index = stepIndexOf(event.target);
    const current = index === null ? state.current : index;
    if (event.altKey && !ctrl) {
      const actions = {
        Enter: () => addStep(state.steps.length ? current + 1 : 0),
        ArrowUp: () => moveStep(current, -1),
        ArrowDown: () => moveStep(current, 1),
        Backspace: () => deleteStep(current),
        Delete: () => deleteStep(current),
        KeyS: () => toggleStructured(current),
        KeyN: () => goNext(),
        KeyE: () => startReviewEdit(),
        KeyC: () => {
          if (!editable()) return;
          $("cannot-complete").checked = !$("cannot-complete").checked;
          $("cannot-complete").dispatchEvent(new Event("change"));
        },
        KeyR: () => {
          if (!requirements.items.length) requirements.items.push("");
          renderRequirements(0);
        },
      };
      const action = actions[event.code] || actions[event.key];
      if (action) {
        event.preventDefault();
        action();
      }
      return;
    }
    if (index === null || ctrl || event.shiftKey) {
      if (event.key === "Escape" && isTyping(event.target)) event.target.blur();
      return;
    }
    const onSelect = event.target.tagName === "SELECT";
    if (event.key === "Enter") {
      event.preventDefault();
      addStep(index + 1);
    } else if (event.key === "ArrowUp" && !onSelect) {
      event.preventDefault();
      focusStep(index - 1, "input, select");
    } else if (event.key === "ArrowDown" && !onSelect) {
      event.preventDefault();
      focusStep(index + 1, "input, select");
    } else if (event.key === "Backspace" && event.target.classList.contains("step-text") && event.target.value === ""
      && state.steps.length > 1) {
      event.preventDefault();
      deleteStep(index, Math.max(0, index - 1));
    } else if (event.key === "Escape") {
      event.target.blur();
    }
  });

  window.addEventListener("beforeunload", (event) => {
    if (state.editSeq !== state.savedSeq || requirementsDirty()) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // Start ---------------------------------------------------------------------------------------

  applyContent(contentFromGold(state.gold));
  state.savedContent = JSON.stringify(storedContent(state.gold));
  renderRequirements();
  restoreRequirements();
  renderRequirements();
  // Unsaved edits a reviewer left on someone else's gold bring the page back in edit mode.
  if (mayEditOthers() && readBackup(backupKey(state.gold))) state.reviewEditing = true;
  if (editable()) restoreBackup();
  updateMeta();
  if (editable()) focusStep(0);
})();
