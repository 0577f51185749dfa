// Live progress of a job (an evaluation, outcome judging): polls the API until the job ends, then reloads the page.
(function () {
  const box = document.getElementById("progress");
  if (!box || !["pending", "running"].includes(box.dataset.status)) return;
  const field = (name) => box.querySelector(`[data-field="${name}"]`);
  async function poll() {
    try {
      const response = await fetch(box.dataset.url, { headers: { Accept: "application/json" } });
      if (response.ok) {
        const job = await response.json();
        box.querySelector("progress").value = job.percent;
        field("status").textContent = job.status;
        field("done").textContent = job.done;
        field("failed").textContent = job.failed;
        for (const name of ["partly_scored", "failed_questions"]) {
          if (field(name)) field(name).textContent = job[name];
        }
        field("total").textContent = job.total;
        field("rate").textContent = job.rate_per_second ? `${job.rate_per_second}/s` : "";
        field("eta").textContent = job.eta_seconds !== null ? `ETA ${job.eta_seconds} s` : "";
        if (!["pending", "running"].includes(job.status)) {
          window.location.reload();
          return;
        }
      }
    } catch (error) {
      // Network hiccup: try again on the next tick.
    }
    window.setTimeout(poll, 1000);
  }
  window.setTimeout(poll, 500);
})();
