"""Words and numbers that explain themselves, read in Chromium at 1366 and 800 px: labels in words,
icon glyphs shown as such, one error per field with the text kept, step metrics explained, and the
history of a re-evaluated run."""

import pytest
from playwright.sync_api import expect

from metrics.services.evaluation import create_evaluation, start_evaluation
from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.factories import (
    AgentRunFactory,
    GoldStepFactory,
    GoldTrajectoryFactory,
    JudgeConfigFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GLYPH_ACTION = "click [7] where [7] is link '\\ue644 Products'"


@pytest.fixture
def scene(django_capture_on_commit_callbacks):
    reviewer = UserFactory(username="rita", is_staff=True, is_superuser=True)
    task = TaskFactory(requirements=["the price", "the colour"])
    gold = GoldTrajectoryFactory(task=task, status="approved", annotator=reviewer)
    GoldStepFactory(gold=gold, index=1, text="click [1]")
    runs = []
    for name in ("another-path", "second-run"):
        run = AgentRunFactory(name=name, uploaded_by=reviewer)
        trajectory = TrajectoryFactory(run=run, task=task, success=True, final_answer=None, outcome_status="no_stop")
        StepFactory(trajectory=trajectory, index=1, action=GLYPH_ACTION, planned_action=None)
        runs.append((run, trajectory))
    with django_capture_on_commit_callbacks(execute=True):
        job = create_evaluation(runs=[run for run, _ in runs], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
        start_evaluation(job)
    return {"reviewer": reviewer, "task": task, "runs": runs, "job": job}


def test_the_trajectory_page_explains_its_numbers_in_words(sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["reviewer"])
    run, trajectory = scene["runs"][0]
    page.goto(live_server.url + f"/trajectories/{trajectory.pk}/")
    expect(page.locator("#step-metrics-note")).to_contain_text("measure agreement with the gold path")
    expect(page.locator("#another-path")).to_have_text("This trajectory reached the goal another way")
    main = page.locator("main")
    expect(main).to_contain_text("element accuracy miss: the reasoning states no action")
    expect(main).to_contain_text("(no final answer)")
    for raw in ("no_planned_action", "(no_answer)"):
        expect(main).not_to_contain_text(raw)
    assert page_width(page) <= width


def test_icon_glyphs_show_as_a_placeholder_in_the_judge_audit_and_side_by_side(sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["reviewer"])
    (first, _), (second, _) = scene["runs"]
    page.goto(live_server.url + f"/compare/{first.pk}/{second.pk}/tasks/{scene['task'].pk}/")
    glyph = page.locator(".glyph").first
    expect(glyph).to_have_text("[icon]")
    assert "U+E644" in glyph.get_attribute("title")
    expect(page.locator("main")).not_to_contain_text("\\ue644")
    expect(page.get_by_role("link", name="Metrics")).to_have_attribute("href", "/docs/metrics/")
    page.get_by_role("link", name="Metrics").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Metrics")
    expect(page.locator("#readme-metrics")).to_contain_text("Step Success Rate")
    assert page_width(page) <= width

    page.goto(live_server.url + "/annotation/judge-audit/")
    expect(page.locator("#audit-list .glyph").first).to_have_text("[icon]")
    expect(page.locator("#audit-list")).not_to_contain_text("\\ue644")
    assert page_width(page) <= width


def test_a_bad_tau_is_said_once_at_its_field_and_kept(sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["reviewer"])
    for path in ("/annotation/judge-quality/", "/annotation/agreement/", "/annotation/judge-audit/"):
        page.goto(live_server.url + path)
        field = page.locator("input[name=tau]").first
        field.fill("9" * 400)
        field.press("Enter")
        expect(page.locator("#tau-error")).to_have_text(
            "τ must be from 0 to 1; 99999999999999999999… is outside that range; showing τ = 0.7")
        expect(page.locator("input[name=tau]").first).to_have_value("9" * 400)
        assert page.locator("main").inner_text().count("outside that range") == 1
        assert page_width(page) <= width


def test_no_verdict_from_the_chosen_source_is_said_in_words(sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["reviewer"])
    page.goto(live_server.url + "/leaderboard/?success_source=check")
    cell = page.locator('#leaderboard tr[data-run="another-path"] td[data-metric="success"]')
    expect(cell.locator(".rp-no-verdicts")).to_have_text("no offline check verdicts")
    expect(page.locator("#leaderboard")).not_to_contain_text("0 null")
    assert page.locator("link[rel=icon]").get_attribute("href").endswith("favicon.svg")


def test_an_export_without_a_run_is_a_form(sized_page, live_server, scene, width):
    page = sized_page
    log_in(page.context, live_server, scene["reviewer"])
    page.goto(live_server.url + "/exports/scores.csv")
    expect(page.get_by_role("heading", level=1)).to_have_text("Export scores as CSV")
    page.get_by_label("Runs").select_option(label="another-path")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download CSV").click()
    assert download.value.suggested_filename.endswith(".csv")
    assert page_width(page) <= width


def test_a_re_evaluation_keeps_history_and_gold_changes_are_announced(sized_page, live_server, scene, width):
    from annotation.models import GoldStep
    from metrics.models import EvaluationJob

    page = sized_page
    log_in(page.context, live_server, scene["reviewer"])
    run, _ = scene["runs"][0]
    first = scene["job"]
    gold = first.scores.filter(trajectory__run=run).get().gold
    GoldStep.objects.filter(gold=gold).update(text="click [7]")
    gold.version += 1
    gold.save()

    page.goto(live_server.url + "/leaderboard/")
    expect(page.locator("#gold-changed")).to_contain_text("Gold changed since these runs were evaluated")
    page.locator("#gold-changed").get_by_role("link", name="another-path").click()
    notice = page.locator(".gold-changed")
    expect(notice).to_contain_text(f"Gold changed since evaluation #{first.pk}")
    notice.get_by_role("button", name="Re-evaluate").click()
    second = EvaluationJob.objects.get(replaces=first)
    assert page.url == live_server.url + f"/evaluations/{second.pk}/"
    expect(page.locator("#job-history")).to_contain_text(f"A re-run of evaluation #{first.pk}, which is kept")

    page.goto(live_server.url + f"/runs/{run.pk}/")
    rerun = page.locator(f'li[data-job="{second.pk}"]')
    expect(rerun).to_contain_text(f"re-run of #{first.pk}")
    expect(rerun.locator(".rerun-changes")).to_contain_text("Step success 0.000 → 1.000")
    expect(page.locator(f'li[data-job="{first.pk}"]')).to_contain_text("replaced by a re-run")
    expect(page.locator(".gold-changed")).to_have_count(0)
    assert page_width(page) <= width
