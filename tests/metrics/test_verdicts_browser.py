"""Outcome grading by two graders, the agreement page and a results-only run, in Debian's Chromium at 1366
and 800 px."""

import json

import pytest
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from tests.factories import AgentRunFactory, StepFactory, TaskFactory, TrajectoryFactory
from tests.metrics.verdict_data import grader
from trajectories.services.outcomes_and_grades import import_outcomes
from trajectories.services.tasks import import_task_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


WIDTHS = [1366, 800]


def page_as(browser, live_server, user, width: int = 1366):
    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


@pytest.mark.parametrize("width", WIDTHS)
def test_two_graders_grade_blind_then_read_their_agreement(browser, live_server, width):
    run = AgentRunFactory(name="graded-run")
    trajectory = TrajectoryFactory(run=run, task=TaskFactory(sites=["reddit"]), success=True,
                                   final_answer="<b>done</b>")
    StepFactory(trajectory=trajectory, index=1)
    url = live_server.url + reverse("metrics:trajectory-detail", args=[trajectory.pk])

    first = page_as(browser, live_server, grader("gina"), width)
    first.goto(url)
    expect(first.locator("#verdicts")).to_contain_text("harness: PASS")
    expect(first.locator("#verdicts")).to_contain_text("human graders: no grades yet")
    first.keyboard.press("n")
    expect(first.locator("#grade-note")).to_be_focused()
    first.keyboard.type("the answer is on the page")
    first.keyboard.press("Escape")
    first.keyboard.press("c")
    first.wait_for_url("**#grading")
    expect(first.locator("#my-grade")).to_have_text("Your grade: correct")
    expect(first.locator("#grades")).to_contain_text("the answer is on the page")

    second = page_as(browser, live_server, grader("hugo", "reviewer"), width)
    second.goto(url)
    expect(second.locator("#grades-hidden")).to_have_text("1 other grade hidden until you grade.")
    expect(second.locator("body")).not_to_contain_text("the answer is on the page")
    second.keyboard.press("i")
    second.wait_for_url("**#grading")
    expect(second.locator("#grades tbody tr")).to_have_count(2)
    expect(second.locator("#grades")).to_contain_text("the answer is on the page")
    # Correct + incorrect: a mean of 0.5 is not a success, so the graders now disagree with the harness.
    expect(second.locator("#verdicts")).to_contain_text("human graders: FAIL (mean grade 0.50 of 2 graders)")
    expect(second.locator("#verdict-disagreement")).to_have_text(
        "The sources disagree: harness vs human graders.")

    second.goto(live_server.url + reverse("metrics:run-detail", args=[run.pk]))
    expect(second.locator("#disagreements")).to_contain_text("1 task where harness and human graders disagree")
    second.get_by_role("link", name="grader agreement").click()
    expect(second.locator("h1")).to_have_text("Grader agreement: graded-run")
    overall = second.locator("#overall")
    expect(overall.locator(".alpha")).to_have_text("0.000")  # one task, opposite marks: no better than chance
    expect(overall.locator("table.pairs")).to_contain_text("gina · hugo")
    expect(overall.locator("table.pairs tbody td").nth(2)).to_have_text("0.0 %")
    expect(overall.locator('tr[data-source="harness"]')).to_contain_text("0 · 1 · 0 · 0")
    expect(second.locator('#by-site section[data-site="reddit"]')).to_be_visible()
    # The agreement tables fit the window (the site's navigation bar is not part of this page's content).
    assert second.evaluate("document.querySelector('main').scrollWidth") <= width
    second.context.close()
    first.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_results_only_runs_on_the_leaderboard(browser, live_server, shared_data, width):
    import_task_file(shared_data / "webarena" / "test.raw.json")
    excerpt = shared_data / "more-benchmarks" / "leaderboard-per-task.excerpt.json"
    import_outcomes(excerpt.name, excerpt.read_bytes())
    scraped = json.dumps([{"t": n, "m": "scraped-wrong", "s": 0} for n in range(200)]).encode()
    import_outcomes("scraped.json", scraped)

    page = page_as(browser, live_server, grader("viewer"), width)
    page.goto(live_server.url + reverse("metrics:leaderboard"))
    jace = page.locator('#leaderboard tr[data-run="jace"]')
    expect(jace.locator(".rp-results-only")).to_have_text("results only")
    expect(jace.locator('td[data-metric="success"]')).to_contain_text("0.560")
    expect(jace.locator('td[data-metric="step_success"]')).to_have_text("not available")
    scraped_row = page.locator('#leaderboard tr[data-run="scraped-wrong"]')
    expect(scraped_row.locator(".rp-uniform")).to_be_visible()
    expect(scraped_row.locator(".rp-uniform")).to_contain_text("every verdict FAIL")
    expect(page.locator("#success-source")).to_have_text("from harness, else offline check")
    # The first rows are the runs with numbers: jace (0.560) above scraped-wrong (0.000).
    expect(page.locator("#leaderboard tbody tr").first).to_have_attribute("data-run", "jace")

    page.select_option("#id_success_source", "harness")
    page.wait_for_url("**success_source=harness**")
    expect(page.locator("#success-source")).to_have_text("from harness")
    page.select_option("#id_site", "shopping_admin")
    page.wait_for_url("**site=shopping_admin**")
    expect(page.locator('#leaderboard tr[data-run="jace"] td[data-metric="success"]')).to_be_visible()
    page.context.close()
