// Charts are drawn in the background: each chart's URL answers 202 until its image is ready. Ask
// again every second, saying so beside the chart, then show it.
(function () {
  "use strict";
  function wait(ms) { return new Promise(function (resolve) { window.setTimeout(resolve, ms); }); }

  function draw(image) {
    var url = image.getAttribute("data-plot");
    var status = image.parentNode.querySelector(".plot-status");
    function ask(tries) {
      return fetch(url, { credentials: "same-origin" }).then(function (response) {
        if (response.status === 200) {
          image.src = url;
          status.textContent = "";
          return null;
        }
        if (response.status !== 202 || tries > 120) {
          return response.json().catch(function () { return {}; }).then(function (body) {
            status.textContent = "The chart could not be drawn" + (body.detail ? ": " + body.detail : ".");
          });
        }
        status.textContent = "Drawing the chart…";
        return wait(1000).then(function () { return ask(tries + 1); });
      });
    }
    ask(0).catch(function () { status.textContent = "The chart could not be loaded; reload the page."; });
  }

  Array.prototype.forEach.call(document.querySelectorAll("img[data-plot]"), draw);
})();
