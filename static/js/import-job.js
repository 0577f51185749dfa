// Progress of a background import: poll until the job is done, then reload to show the report.
(function () {
  "use strict";
  var box = document.getElementById("import-job");
  if (!box || (box.dataset.status !== "pending" && box.dataset.status !== "running")) return;
  var bar = document.getElementById("job-progress");
  var counter = document.getElementById("job-counter");

  function poll() {
    fetch(box.dataset.progressUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (job) {
        if (job.status === "done" || job.status === "failed") {
          location.reload();
          return;
        }
        if (job.total) {
          bar.max = job.total;
          bar.value = job.processed;
          counter.textContent = " · " + job.processed + " of " + job.total + " files read";
        }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 5000); });
  }
  setTimeout(poll, 1000);
})();
