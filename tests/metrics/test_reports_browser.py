"""The leaderboard, the evaluation pages and the evaluate form in Debian's Chromium, 1366 and 800 px wide."""

import re

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from metrics.models import EvaluationJob
from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.factories import UserFactory
from tests.metrics.reports import two_evaluated_runs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def runs():
    cache.clear()
    yield two_evaluated_runs()
    cache.clear()


@pytest.fixture
def admin(sized_page, live_server):
    log_in(sized_page.context, live_server, UserFactory(username="boss", is_staff=True, is_superuser=True))
    return sized_page


def test_the_run_name_stays_in_view_while_the_leaderboard_scrolls_sideways(admin, live_server, runs, width):
    page = admin
    page.goto(live_server.url + "/leaderboard/")
    page.locator("#column-chooser summary").click()
    for box in page.locator("#column-chooser input[type=checkbox]").all():
        box.check()  # every column: wider than a 1366 px window
    assert page_width(page) <= width  # the table scrolls inside its box, not the page
    scroller = page.locator(".table-scroll").filter(has=page.locator("#leaderboard"))
    scroller.evaluate("box => { box.scrollLeft = 0; }")
    name = page.locator("tr[data-run='alpha'] td").first
    header = page.locator("#leaderboard thead th").first
    metric = page.locator("tr[data-run='alpha'] td[data-metric='step_success']")
    before, header_before, metric_before = name.bounding_box(), header.bounding_box(), metric.bounding_box()
    scrolled = scroller.evaluate("box => { box.scrollLeft = 400; return box.scrollLeft; }")
    assert scrolled > 0, "the table is wider than its box at this width"
    assert name.bounding_box()["x"] == pytest.approx(before["x"], abs=1)
    assert header.bounding_box()["x"] == pytest.approx(header_before["x"], abs=1)
    assert metric.bounding_box()["x"] < metric_before["x"] - 100  # the other columns did move
    expect(name).to_contain_text("alpha")
    # the name is drawn above the cells that pass under it
    assert page.evaluate("""() => {
        const cell = document.querySelector("tr[data-run='alpha'] td");
        window.scrollBy(0, cell.getBoundingClientRect().top - window.innerHeight / 2);  // the row in the window
        const box = cell.getBoundingClientRect();
        return document.elementFromPoint(box.left + 5, box.top + box.height / 2).closest("td") === cell;
    }""")


def test_a_judge_mark_is_described_by_its_note_said_once_under_the_table(admin, live_server, runs, width):
    page = admin
    page.goto(live_server.url + "/leaderboard/")
    mark = page.locator("tr[data-run='alpha'] td[data-metric='step_success'] .rp-judge-mark")
    note = page.locator("#" + mark.get_attribute("aria-describedby"))
    sentence = "Judge exact is not trusted yet on 'Agent step vs gold step' at tau 0.7"
    expect(note).to_contain_text(sentence)
    expect(mark).to_have_accessible_description(re.compile(re.escape(sentence)))
    mark.hover()  # a mouse finds it in the tooltip
    expect(mark).to_have_attribute("title", note.text_content())
    mark.focus()  # a keyboard follows the mark to its note
    page.keyboard.press("Enter")
    page.wait_for_url("**#" + note.get_attribute("id"))


def test_the_success_recovery_plot_is_drawn(admin, live_server, runs, width):
    page = admin
    page.goto(live_server.url + "/leaderboard/")
    plot = page.get_by_role("img", name="Success rate against recovery rate, one point per run")
    plot.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=plot.element_handle())
    assert plot.bounding_box()["x"] + plot.bounding_box()["width"] <= width


def test_the_evaluation_summary_names_its_metrics(admin, live_server, runs, width):
    page = admin
    page.goto(live_server.url + f"/evaluations/{runs.alpha_job.pk}/")
    headers = page.locator("#summary thead th").all_inner_texts()
    assert headers[:3] == ["Run", "Step success", "Recovery"] and "Element accuracy" in headers
    assert not any("_" in header or header.islower() for header in headers)
    page.locator("#mainnav").get_by_role("link", name="Evaluations").click()
    expect(page.get_by_role("heading", name="Evaluations")).to_be_visible()


def test_a_refused_evaluation_keeps_its_choices_and_names_fields_by_label(admin, live_server, runs, width):
    page = admin
    page.goto(live_server.url + f"/runs/{runs.beta.pk}/")
    form = page.locator(".evaluate-form")
    form.get_by_label("Gold policy").select_option("annotator")
    too_long = "1" * 400
    form.get_by_label("Threshold τ").fill(too_long)
    form.get_by_label("Recovery window W").fill("2")
    form.get_by_label("Ordered matching").check()
    jobs = EvaluationJob.objects.count()
    page.get_by_role("button", name="Start evaluation").click()
    # each error once, at its field (inside the field's own block), in words
    annotator_error = form.locator("div", has=page.get_by_label("Gold annotator")).locator(".errorlist")
    expect(annotator_error).to_have_text("Choose the annotator whose gold to use.")
    tau_error = form.locator("div", has=page.get_by_label("Threshold τ")).locator(".errorlist")
    expect(tau_error).to_have_text("τ must be from 0 to 1; 11111111111111111111… is outside that range")
    assert page.locator("main").inner_text().count("Choose the annotator whose gold to use.") == 1
    assert page.locator("main").inner_text().count("outside that range") == 1
    for raw in ("gold_annotator:", "tau:", "Enter a number"):
        expect(page.locator("main")).not_to_contain_text(raw)
    expect(form.get_by_label("Gold policy")).to_have_value("annotator")
    expect(form.get_by_label("Threshold τ")).to_have_value(too_long)
    expect(form.get_by_label("Recovery window W")).to_have_value("2")
    expect(form.get_by_label("Ordered matching")).to_be_checked()
    assert EvaluationJob.objects.count() == jobs
    assert page_width(page) <= width
