"""Every page fits the window, 1366 and 800 px wide, whatever the data: a run named with 200
characters and no space, a long agent and model, long task and file names."""

import re
from collections import deque
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
from django.utils import timezone

from metrics.services.evaluation import create_evaluation, start_evaluation
from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.factories import (
    GoldStepFactory,
    GoldTrajectoryFactory,
    JudgeConfigFactory,
    JudgeDecisionFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
    UserFactory,
)
from tests.site_scene import LONG_WORD, LONG_WORDS, change_gold, make_scene, walk_starts
from trajectories.models import AgentRun
from trajectories.services.import_jobs import create_import_job, run_import_job
from trajectories.services.tasks import import_task_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_NAME = "run-" + "x" * 196
WIDE_PAGES = ("/", "/runs/", "/runs/{run}/", "/leaderboard/", "/evaluations/", "/evaluations/{job}/",
              "/trajectories/{trajectory}/", "/imports/{import_job}/", "/compare/?baseline={run}&candidate={other}",
              "/annotation/judge-quality/", "/annotation/agreement/", "/annotation/judge-audit/",
              "/annotation/quality/", "/annotation/gold/{gold}/", "/annotation/review/", "/annotation/",
              "/tasks/{task}/", "/runs/import/", "/exports/scores.csv")


@pytest.fixture
def scene(shared_data, django_capture_on_commit_callbacks):
    import_task_file(shared_data / "webarena" / "test.raw.json")
    admin = UserFactory(username="admin-" + "a" * 60, is_staff=True, is_superuser=True)
    run = AgentRun.objects.create(name=LONG_NAME, agent="agent-" + "b" * 80, model="model-" + "c" * 80,
                                  uploaded_by=admin)
    with (shared_data / "trajectory-samples" / "llama3-8b_render_6.html").open("rb") as upload:
        job = create_import_job(run, [("render_6_" + "d" * 150 + ".html", upload)], user=admin)
    import_job = run_import_job(job.pk)
    other = AgentRun.objects.create(name="other-" + "y" * 150, uploaded_by=admin)
    task = TaskFactory(intent="Find " + "z" * 300)
    gold = GoldTrajectoryFactory(task=task, status="approved", annotator=admin)
    GoldStepFactory(gold=gold, index=1, text="click " + "w" * 250)
    trajectories = []
    for each in (run, other):
        trajectory = TrajectoryFactory(run=each, task=task, final_answer="v" * 300)
        StepFactory(trajectory=trajectory, index=1, action="click [" + "u" * 200 + "]")
        trajectories.append(trajectory)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = create_evaluation(runs=[run, other], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
        start_evaluation(evaluation)
    # a human-confirmed decision of a judge with a long model name: the judge-quality page has a row
    JudgeDecisionFactory(model="model-" + "m" * 150, score=0.9, human_score=1.0, reviewed_at=timezone.now(),
                         reviewed_by=admin)
    return {"admin": admin, "run": run.pk, "other": other.pk, "job": evaluation.pk, "import_job": import_job.pk,
            "trajectory": trajectories[0].pk, "gold": gold.pk, "task": task.pk}


def test_no_page_is_wider_than_the_window(sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["admin"])
    too_wide = {}
    for path in WIDE_PAGES:
        page.goto(live_server.url + path.format(**scene))
        if path == "/annotation/judge-quality/":
            assert page.locator(".table-scroll table.judge-quality").is_visible()  # only the table may scroll
        if page_width(page) > width:
            too_wide[path] = (page_width(page), page.evaluate("""(width) => [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > width + 1).slice(0, 6)
                .map(e => e.tagName + '.' + e.className + '#' + e.id + ' ' + Math.round(e.getBoundingClientRect().width))""", width))
    assert not too_wide, "\n".join(f"{k}: {v}" for k, v in too_wide.items())


def test_the_leaderboard_keeps_its_run_column_narrow_and_remembers_the_columns_chosen(
        sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["admin"])
    page.goto(live_server.url + "/leaderboard/")
    run_cell = page.locator(f'#leaderboard tbody tr[data-run="{LONG_NAME}"] td.rp-run-col')
    assert run_cell.bounding_box()["width"] <= 250
    link = run_cell.get_by_role("link")
    assert link.get_attribute("title").startswith(LONG_NAME + " · agent agent-bbb")
    if width == 1366:  # the default columns fit without sideways scrolling
        assert page.evaluate("""() => {
            const table = document.getElementById('leaderboard');
            return table.scrollWidth <= table.parentElement.clientWidth; }""")
    recovery = page.locator('#leaderboard th[data-metric="recovery"]')
    assert recovery.is_visible() and not page.locator('#leaderboard th[data-metric="grounded"]').is_visible()
    page.locator("#column-chooser summary").click()
    page.locator("#column-chooser").get_by_label("Recovery").uncheck()
    page.locator("#column-chooser").get_by_label("Grounded").check()
    assert not recovery.is_visible() and not page.locator('#leaderboard td[data-metric="recovery"]').first.is_visible()
    page.reload()
    assert not page.locator('#leaderboard th[data-metric="recovery"]').is_visible()
    assert page.locator('#leaderboard th[data-metric="grounded"]').is_visible()
    page.locator("#column-chooser summary").click()
    page.locator("#columns-reset").click()
    assert page.locator('#leaderboard th[data-metric="recovery"]').is_visible()


def test_the_gold_editors_task_panel_leaves_the_save_line_visible_in_one_column(sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["admin"])
    page.goto(live_server.url + f"/annotation/gold/{scene['gold']}/")
    position = page.evaluate("getComputedStyle(document.querySelector('.task-panel')).position")
    assert position == ("sticky" if width == 1366 else "static")
    state = page.locator("#save-state")
    state.scroll_into_view_if_needed()
    box = page.locator("#save-button").bounding_box()
    on_top = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('.task-panel') === null",
                           [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
    assert on_top, "the task panel covers the save line"


def test_the_owner_renames_and_deletes_a_run_from_its_page(sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["admin"])
    page.goto(live_server.url + f"/runs/{scene['run']}/")
    page.locator("#run-rename summary").click()
    page.get_by_label("New name").fill("short-name")
    page.locator("#run-rename").get_by_role("button", name="Rename").click()
    assert page.get_by_role("heading", level=1).inner_text() == "short-name"
    page.get_by_role("link", name="Delete…").click()
    deletion = page.locator("#run-deletion")
    assert "2 trajectories with 4 steps" in deletion.inner_text() and "1 evaluation shared" in deletion.inner_text()
    assert page_width(page) <= width
    page.get_by_role("button", name="Delete short-name").click()
    assert page.url == live_server.url + "/runs/"
    assert "Run short-name deleted." in page.locator(".messages").inner_text()
    assert not AgentRun.objects.filter(pk=scene["run"]).exists()


# Every page each role can reach, walked in Chromium ------------------------------------------------------------

ROLES = ("no role", "annotator", "reviewer", "admin")
NOT_PAGES = re.compile(r"^/(exports|plots|media|screenshots|admin|api|annotation/export|annotation/schemas|schemas|"
                       r"static)/|^/verdicts/judges\.|^/metrics$|^/healthz$|^/accounts/logout/|\.(csv|json|svg|png)$")
# Words split across two lines although they would fit whole in the box that holds them.
BROKEN_WORDS = """() => {
  const found = [];
  const range = document.createRange();
  const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node && found.length < 8; node = walker.nextNode()) {
    if (!node.parentElement || !node.parentElement.getClientRects().length) continue;
    for (const match of node.data.matchAll(/\\S{2,}/g)) {
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const rects = [...range.getClientRects()].filter(rect => rect.width > 0);
      if (new Set(rects.map(rect => Math.round(rect.bottom))).size < 2) continue;
      let box = node.parentElement;
      while (getComputedStyle(box).display.startsWith('inline') && box.parentElement) box = box.parentElement;
      if (match[0].includes('-')) continue;  // a line may end after a hyphen, as in print
      const style = getComputedStyle(box);
      const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      const width = rects.reduce((sum, rect) => sum + rect.width, 0);
      if (width <= room) found.push(`"${match[0].slice(0, 40)}" (${Math.round(width)} px) in ${box.tagName}.${box.className} (${Math.round(room)} px)`);
    }
  }
  return found;
}"""
TOO_WIDE = """(width) => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > width + 1).slice(0, 4)
  .map(e => e.tagName + '.' + e.className + '#' + e.id + ' ' + Math.round(e.getBoundingClientRect().width))"""


def _kind(url: str) -> tuple:
    """One page of each kind is enough: numbers and README sections alike, the names of the query's parameters."""
    parts = urlsplit(url)
    path = re.sub(r"^/docs/[\w-]+/", "/docs/S/", re.sub(r"/\d+(?=/|$)", "/N", parts.path))
    return path, tuple(sorted({key for key, _ in parse_qsl(parts.query)}))


@pytest.fixture
def site(tmp_path, shared_data):
    scene = make_scene(tmp_path, shared_data)
    change_gold(scene)
    return scene


def _long_named_pages(site) -> list[str]:
    """The pages of the runs, trajectories and task named with 200 characters, with and without spaces: each
    walked, whatever page of its kind was walked already."""
    runs = list(AgentRun.objects.filter(name__in=(LONG_WORD, LONG_WORDS)).order_by("name"))
    task = site["platform"]["tasks"][0]
    return [*(f"/runs/{run.pk}/" for run in runs), *(f"/trajectories/{run.trajectories.get().pk}/" for run in runs),
            *(f"/evaluations/{run.evaluation_jobs.get().pk}/" for run in runs), f"/tasks/{site['long_task'].pk}/",
            f"/compare/?baseline={quote(LONG_WORD)}&candidate={quote(LONG_WORDS)}",
            f"/compare/{runs[0].pk}/{runs[1].pk}/tasks/{task.pk}/", f"/annotation/gold/{site['gold'].pk}/"]


def test_every_page_of_every_role_fits_the_window_and_keeps_its_words_whole(sized_page, live_server, site, width):
    page = sized_page
    problems = {}
    for role in ROLES:
        page.context.clear_cookies()
        log_in(page.context, live_server, site["users"][role])
        forced = _long_named_pages(site)
        queue, seen = deque([*forced, *walk_starts(site)]), set()
        while queue:
            url = queue.popleft()
            if NOT_PAGES.search(urlsplit(url).path) or (_kind(url) in seen and url not in forced):
                continue
            seen.add(_kind(url))
            if url in forced:
                forced.remove(url)
            response = page.goto(live_server.url + url)
            if response is None or response.status >= 400 or "text/html" not in response.headers.get("content-type", ""):
                continue
            if page_width(page) > width:
                problems[f"{role} {url}"] = f"{page_width(page)} px wide: {page.evaluate(TOO_WIDE, width)}"
            broken = page.evaluate(BROKEN_WORDS)
            if broken:
                problems[f"{role} {url} "] = f"words broken: {broken}"
            for link in page.eval_on_selector_all("a[href^='/']", "links => links.map(a => a.getAttribute('href'))"):
                queue.append(link.split("#", 1)[0])
    assert not problems, "\n".join(f"{where}: {what}" for where, what in sorted(problems.items()))
