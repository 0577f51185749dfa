// Keyboard navigation between the steps of a trajectory: j / ArrowRight next, k / ArrowLeft
// previous, t opens or closes the current step's accessibility tree.
(function () {
  "use strict";
  function all() { // queried each time: more steps arrive as the reader scrolls
    return Array.prototype.slice.call(document.querySelectorAll(".tj-step"));
  }
  var steps = all();
  if (!steps.length) return;
  var current = -1;

  function show(position) {
    steps = all();
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

  var viewer = document.getElementById("shot-viewer");

  document.addEventListener("keydown", function (event) {
    if (viewer && viewer.open) return; // the screenshot viewer has its own keys
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

// More steps, a page at a time: the "Show steps ..." link brings the next page into this one when it
// is followed (focus moves to the first new step) or scrolls into view; without scripts it opens that page.
(function () {
  "use strict";
  var list = document.getElementById("steps");
  if (!list || !window.fetch || !window.DOMParser) return;
  var loading = false;
  var focusFirst = false; // followed while it was already loading (it came into view): focus when it arrives

  function load(link, focus) {
    focusFirst = focusFirst || focus;
    if (loading) return;
    loading = true;
    link.setAttribute("aria-busy", "true");
    fetch(link.getAttribute("data-fragment"), { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        var holder = document.getElementById("more-steps");
        var first = null;
        var parsed = new DOMParser().parseFromString(html, "text/html");
        Array.prototype.slice.call(parsed.body.children).forEach(function (node) {
          var added = list.insertBefore(document.importNode(node, true), holder);
          if (!first && added.classList.contains("tj-step")) first = added;
        });
        holder.remove();
        if (focusFirst && first) first.focus();
        focusFirst = false;
        watch();
      })
      .catch(function () { link.removeAttribute("aria-busy"); })
      .then(function () { loading = false; });
  }

  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) { if (entry.isIntersecting) load(entry.target, false); });
  }, { rootMargin: "600px" }) : null;

  function watch() {
    var link = document.querySelector("#more-steps a[data-fragment]");
    if (!link) return;
    link.addEventListener("click", function (event) {
      event.preventDefault();
      load(link, true);
    });
    if (observer) {
      observer.disconnect();
      observer.observe(link);
    }
  }
  watch();
})();

// Screenshots open in a zoomable view (a modal dialog: Esc closes it and focus returns to the
// screenshot); without scripts the link still opens the image itself.
(function () {
  "use strict";
  var viewer = document.getElementById("shot-viewer");
  if (!viewer || typeof viewer.showModal !== "function") return;
  var image = document.getElementById("shot-image");
  var canvas = document.getElementById("shot-canvas");
  var readout = document.getElementById("shot-zoom");
  var STEPS = [0.25, 0.33, 0.5, 0.67, 0.8, 1, 1.25, 1.5, 2, 3, 4];
  var zoom = 1;
  var zoomedByHand = false; // a zoom chosen before the image arrived is kept when it does
  var opener = null;

  function fitZoom() {
    if (!image.naturalWidth) return 1;
    return Math.min(1, canvas.clientWidth / image.naturalWidth, canvas.clientHeight / image.naturalHeight);
  }

  function setZoom(value) {
    zoom = Math.max(STEPS[0], Math.min(STEPS[STEPS.length - 1], value));
    if (image.naturalWidth) image.style.width = Math.round(image.naturalWidth * zoom) + "px";
    image.classList.toggle("zoomed", zoom > fitZoom() + 0.001);
    readout.textContent = Math.round(zoom * 100) + "%";
    viewer.dataset.zoom = String(zoom);
  }

  function choose(value) {
    zoomedByHand = true;
    setZoom(value);
  }

  function step(direction) {
    var next = direction > 0 ? STEPS.find(function (value) { return value > zoom + 0.001; })
      : STEPS.slice().reverse().find(function (value) { return value < zoom - 0.001; });
    choose(next === undefined ? zoom : next);
  }

  function open(link) {
    opener = link;
    var thumbnail = link.querySelector("img");
    document.getElementById("shot-viewer-title").textContent = thumbnail ? thumbnail.alt : "Screenshot";
    image.alt = thumbnail ? thumbnail.alt : "Screenshot";
    document.getElementById("shot-original").href = link.href;
    zoomedByHand = false;
    image.onload = function () { setZoom(zoomedByHand ? zoom : fitZoom()); };
    image.src = link.href;
    viewer.showModal();
    canvas.focus();
    if (image.complete && image.naturalWidth) setZoom(fitZoom());
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.tj-shot");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    open(link);
  });

  viewer.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-zoom]");
    if (button) {
      var action = button.dataset.zoom;
      if (action === "in") step(1);
      else if (action === "out") step(-1);
      else if (action === "fit") choose(fitZoom());
      else choose(1);
    } else if (event.target === image) {
      choose(zoom > fitZoom() + 0.001 ? fitZoom() : Math.max(1, fitZoom() * 2));
    } else if (event.target === viewer) {
      viewer.close(); // a click on the backdrop
    }
  });
  document.getElementById("shot-close").addEventListener("click", function () { viewer.close(); });

  viewer.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "+" || event.key === "=") step(1);
    else if (event.key === "-" || event.key === "_") step(-1);
    else if (event.key === "0") choose(fitZoom());
    else if (event.key === "1") choose(1);
    else return;
    event.preventDefault();
  });

  viewer.addEventListener("close", function () {
    image.removeAttribute("src");
    if (opener) opener.focus();
  });
})();

// The point a step acted at (an agent acting by screen coordinates), marked on its screenshot: placed
// in % of the image's natural size, so that it stays on the spot however the page scales the image.
// Markers arrive with their steps (a later page of steps too) and are placed once their image loads.
(function () {
  "use strict";
  function place(image) {
    var marker = image.parentNode && image.parentNode.querySelector(".tj-point");
    if (!marker || !image.naturalWidth || !image.naturalHeight) return;
    var x = parseFloat(marker.getAttribute("data-x"));
    var y = parseFloat(marker.getAttribute("data-y"));
    if (!(x >= 0 && x <= image.naturalWidth && y >= 0 && y <= image.naturalHeight)) return; // not on this image
    marker.style.left = (100 * x / image.naturalWidth) + "%";
    marker.style.top = (100 * y / image.naturalHeight) + "%";
    marker.hidden = false;
  }

  document.addEventListener("load", function (event) {
    if (event.target.tagName === "IMG") place(event.target);
  }, true); // load does not bubble: caught on its way down
  Array.prototype.forEach.call(document.querySelectorAll(".tj-shot-frame img"), function (image) {
    if (image.complete) place(image);
  });
})();
