"""The judges-vs-humans page, its API and CSV, from Agent-E's published evaluation records (human
evaluators and a GPT-4o judge on each task) and from the platform's own graders and checks; on one run
(linked from its page), and what they say when no source can be read against the humans (Online-Mind2Web's
human labels and browser-use's judged results as published)."""

import html
import io
import re

import pandas as pd
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from metrics.selectors.verdicts_per_source import judges_report
from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory, UserFactory
from tests.metrics.verdict_data import grader, three_voices
from trajectories.models import AgentRun, Task, Verdict, VerdictKind, VerdictSource
from trajectories.services.outcomes_and_grades import record_grade
from trajectories.verdict_agreement import named_source

pytestmark = pytest.mark.django_db

TEXT, VISION = "agent-e-text", "agent-e-vision"


@pytest.fixture
def agent_e(shared_data):
    """Agent-E's two excerpts (the same 30 WebVoyager tasks; each judge evaluated 15), one run each."""
    folder = shared_data / "agent-outputs" / "agent-e"
    for run, name in ((TEXT, "text_main_chat_eval_gpt4o"), (VISION, "vision_final_eval_gpt4o")):
        call_command("import_trajectories", str(folder / f"{name}.excerpt.json"), "--run", run, verbosity=0,
                     stdout=io.StringIO())
    return judges_report("webvoyager")


@pytest.fixture
def client(client):
    client.force_login(UserFactory())
    return client


@pytest.fixture
def api():
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory())[1]}")
    return api


def cells(row) -> tuple:
    a = row.agreement
    return a.true_positive, a.false_positive, a.false_negative, a.true_negative, row.unsure


def test_agent_e_judges_against_its_human_evaluators(agent_e):
    """Counted by hand from the two files' `score` (human) and `pred_score` (judge) where both are given."""
    assert agent_e.runs == (TEXT, VISION)
    assert [label for _key, label in agent_e.human_sources] == ["Agent-E human evaluators"]
    rows = {row.label: row for row in agent_e.sources}
    text, vision = rows["Agent-E text GPT-4o judge"], rows["Agent-E vision GPT-4o judge"]
    assert list(text.runs) == [TEXT] and list(vision.runs) == [VISION]

    # Text judge: 9 tasks both say success, 6 it passes that the humans fail; it never says failure.
    assert cells(text.overall) == (9, 6, 0, 0, 0)
    metrics = text.overall.metrics
    assert (metrics["n"], metrics["accuracy"], metrics["precision"], metrics["recall"]) == (15, 0.6, 0.6, 1.0)
    assert metrics["f1"] == pytest.approx(0.75) and metrics["npv"] is None and metrics["tnr"] == 0.0
    assert metrics["kappa"] == pytest.approx(0.0)  # agreement 0.6 is what chance gives: 1 * 0.6

    # Vision judge: TP 6, FP 1, FN 3, TN 5.
    assert cells(vision.overall) == (6, 1, 3, 5, 0)
    metrics = vision.overall.metrics
    assert metrics["accuracy"] == pytest.approx(11 / 15)
    assert metrics["precision"] == pytest.approx(6 / 7) and metrics["recall"] == pytest.approx(6 / 9)
    assert metrics["f1"] == pytest.approx(12 / 16)
    assert metrics["npv"] == pytest.approx(5 / 8) and metrics["tnr"] == pytest.approx(5 / 6)
    # chance (7/15)(9/15) + (8/15)(6/15) = 111/225; kappa (165 - 111) / (225 - 111).
    assert metrics["kappa"] == pytest.approx(54 / 114)
    assert metrics["kappa_low"] < metrics["kappa"] < metrics["kappa_high"]
    assert vision.runs[VISION] == vision.overall
    assert text.overall.sparse and vision.overall.sparse  # 15 tasks each

    # One evaluator per task: no pair of humans to read the judges against.
    assert agent_e.ceiling.overall.items == 0 and agent_e.ceiling.runs == {}


def test_graders_and_the_platforms_own_sources(django_capture_on_commit_callbacks):
    """Task A: harness fail, offline check pass, both graders 1; task B: all fail (grades 0 and 0.5)."""
    three_voices(django_capture_on_commit_callbacks)
    report = judges_report("webarena")
    assert [label for _key, label in report.human_sources] == ["human graders"]
    rows = {row.label: row for row in report.sources}
    assert cells(rows["harness"].overall) == (0, 0, 1, 1, 0)
    assert cells(rows["offline check"].overall) == (1, 0, 0, 1, 0)
    assert rows["offline check"].overall.metrics["kappa"] == 1.0
    assert rows["harness"].overall.metrics["kappa"] == 0.0
    # The two graders agree on both tasks (0.5 is not a success).
    assert cells(report.ceiling.runs["three-voices"]) == (1, 0, 0, 1, 0)
    assert report.ceiling.overall.metrics["kappa"] == 1.0


def test_a_second_human_source_is_a_choice_and_a_split_is_unsure(agent_e):
    experts = VerdictSource.objects.create(kind=VerdictKind.HUMAN, name="Expert annotators")
    run = AgentRun.objects.get(name=VISION)
    # Allrecipes--0: evaluators and the vision judge say success; the experts say failure.
    Verdict.objects.create(run=run, task=Task.objects.get(task_id="Allrecipes--0"), source=experts, success=False)
    consensus = {row.label: row for row in judges_report("webvoyager").sources}
    assert cells(consensus["Agent-E vision GPT-4o judge"].overall) == (5, 1, 3, 5, 1)
    ceiling = judges_report("webvoyager").ceiling.overall
    assert (ceiling.items, ceiling.metrics["accuracy"]) == (1, 0.0)

    chosen = judges_report("webvoyager", named_source(experts.pk))
    assert chosen.reference_label == "Expert annotators"
    [row] = [row for row in chosen.sources if row.label.startswith("Agent-E vision")]
    assert cells(row.overall) == (0, 1, 0, 0, 0)


def page_text(response) -> str:
    assert response.status_code == 200
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))


def test_the_page_greys_rows_under_thirty_tasks(agent_e, client):
    response = client.get(reverse("metrics:judges-vs-humans"), {"benchmark": "webvoyager"})
    text = page_text(response)
    assert "Judges vs humans: webvoyager" in text and "Agent-E vision GPT-4o judge" in text
    body = response.content.decode()
    sparse_rows = re.findall(r'<tr data-source="([^"]+)" class="[^"]*sparse"\s*title="Only (\d+) tasks? scored', body)
    assert sparse_rows and all(source.startswith("source:") or source == "human-ceiling"
                               for source, _count in sparse_rows)
    assert ("human-ceiling", "0") in sparse_rows and ("15" in {count for _source, count in sparse_rows})
    assert body.count('class="rp-table judges"') == 3  # all agents, and each run
    assert "0.474" in text  # the vision judge's kappa


def test_the_page_refuses_an_unknown_human_source(agent_e, client):
    response = client.get(reverse("metrics:judges-vs-humans"), {"benchmark": "webvoyager", "human": "harness"})
    assert response.status_code == 400 and b"human: 'harness' is not a human source" in response.content


def test_the_page_needs_a_login(agent_e):
    assert Client().get(reverse("metrics:judges-vs-humans")).status_code == 302


def test_csv_from_the_page_and_the_api(agent_e, client, api):
    page = client.get(reverse("metrics:judges-vs-humans-export", args=["csv"]), {"benchmark": "webvoyager"})
    assert page.status_code == 200 and 'filename="judges-webvoyager.csv"' in page["Content-Disposition"]
    frame = pd.read_csv(io.BytesIO(page.content))
    from_api = api.get(reverse("api-export-judges", kwargs={"fmt": "csv"}), {"benchmark": "webvoyager"})
    assert from_api.status_code == 200 and from_api.content == page.content
    overall = frame[frame["run"].isna()]
    assert list(overall["source"])[0] == "human-ceiling"
    vision = overall[overall["source_label"] == "Agent-E vision GPT-4o judge"].iloc[0]
    assert (vision["n"], vision["true_positive"], vision["false_negative"], bool(vision["sparse"])) == (15, 6, 3, True)
    assert vision["kappa"] == pytest.approx(54 / 114) and vision["reference"] == "human consensus"
    per_run = frame[frame["run"] == TEXT]
    assert list(per_run["source_label"]) == ["Agent-E text GPT-4o judge"]


def test_the_api_per_run_and_overall(agent_e, api):
    body = api.get(reverse("api-judges-vs-humans"), {"benchmark": "webvoyager"}).json()
    assert body["benchmark"] == "webvoyager" and body["reference"] == ""
    assert [run["run"] for run in body["runs"]] == [TEXT, VISION]
    [row] = body["runs"][1]["rows"]
    assert (row["n"], row["unsure"], row["true_negative"], row["sparse"]) == (15, 0, 5, True)
    assert body["overall"][0]["source"] == "human-ceiling" and body["overall"][0]["precision"] is None
    refused = api.get(reverse("api-judges-vs-humans"), {"benchmark": "webvoyager", "human": "nobody"})
    assert refused.status_code == 400 and refused.json()["errors"]["human"].startswith(
        "'nobody' is not a human source of these runs (choose one of: source:")


def test_a_benchmark_without_human_verdicts_says_so(client):
    AgentRunFactory(name="solo", benchmark="webarena")
    text = page_text(client.get(reverse("metrics:judges-vs-humans")))
    assert "No task of these runs has both a human verdict and an automatic one." in text


def test_the_run_page_and_the_judge_quality_page_link_to_it(agent_e, client):
    run = AgentRun.objects.get(name=VISION)
    body = client.get(reverse("metrics:run-detail", args=[run.pk])).content.decode()
    assert (f'href="{reverse("metrics:judges-vs-humans")}?benchmark=webvoyager&amp;run={VISION}" '
            'id="judges-vs-humans-link">judges vs humans on this run</a>') in body
    body = client.get(reverse("annotation:judge-quality")).content.decode()
    assert f'<a href="{reverse("metrics:judges-vs-humans")}">judges vs humans</a>' in body


# --- one run, and what is missing when no source meets the humans ------------------------------------------

OM2W = "online-mind2web"


@pytest.fixture
def om2w(shared_data):
    return shared_data / "agent-outputs" / OM2W


def human_labels(om2w):
    """Six results-only runs, one per agent of the file, with the humans' labels on its 30 tasks."""
    call_command("import_verdicts", str(om2w / "human_label.excerpt.json"), stdout=io.StringIO())


def browser_use_cloud(om2w):
    """15 tasks with browser-use's own judge (an LLM judge) on each, and no human verdict."""
    call_command("import_trajectories", str(om2w / "browser_use_cloud"), "--run", "browser-use-cloud", verbosity=0,
                 stdout=io.StringIO())


def judges(client, **query):
    return client.get(reverse("metrics:judges-vs-humans"), query)


def test_a_chosen_run_shows_its_rows_alone_with_a_way_back_to_all(agent_e, client):
    response = judges(client, run=VISION)
    body = response.content.decode()
    assert body.count('class="rp-table judges"') == 1 and f'data-run="{VISION}"' in body
    assert 'id="all-runs"' not in body and f'data-run="{TEXT}"' not in body
    page = page_text(response)
    assert f"Judges vs humans: run {VISION}" in page and "Agent-E vision GPT-4o judge" in page
    assert 'href="?benchmark=webvoyager" id="judges-all-runs">all agents on webvoyager</a>' in body
    assert f'<input type="hidden" name="run" value="{VISION}">' in body
    assert 'id="no-verdicts"' not in body


def test_the_api_and_the_csv_keep_to_the_chosen_run(agent_e, api, client):
    body = api.get(reverse("api-judges-vs-humans"), {"run": VISION}).json()
    assert body["benchmark"] == "webvoyager" and [run["run"] for run in body["runs"]] == [VISION]
    assert body["empty_reasons"] == []
    # Overall rows stay those of every run: the text judge is among them.
    assert any(row["label"].startswith("Agent-E text") for row in body["overall"])
    csv = client.get(reverse("metrics:judges-vs-humans-export", args=["csv"]), {"run": VISION})
    assert 'filename="judges-agent-e-vision.csv"' in csv["Content-Disposition"]
    assert set(pd.read_csv(io.BytesIO(csv.content))["run"]) == {VISION}
    from_api = api.get(reverse("api-export-judges", kwargs={"fmt": "csv"}), {"run": VISION})
    assert from_api.content == csv.content


def test_a_run_unknown_or_of_another_benchmark_is_refused(agent_e, api, client):
    AgentRunFactory(name="shop", benchmark="webarena")
    unknown = judges(client, run="nobody")
    assert unknown.status_code == 400 and unknown.content == b"run: no run is named 'nobody'"
    elsewhere = api.get(reverse("api-judges-vs-humans"), {"run": "shop", "benchmark": "webvoyager"})
    assert elsewhere.status_code == 400
    assert elsewhere.json()["errors"]["run"] == "run shop is a run of webarena, not of webvoyager"


def test_no_human_verdict_says_to_import_labels_or_grade(om2w, client, api):
    browser_use_cloud(om2w)
    run = AgentRun.objects.get(name="browser-use-cloud")
    page = judges(client, benchmark=OM2W)
    body = page.content.decode()
    assert re.findall(r'data-reason="(\w+)"', body) == ["no_human"]
    assert ("No human verdict on online-mind2web yet: import human labels (a file of them, on the verdict import "
            "page or with manage.py import_verdicts) or grade trajectories on their pages.") in page_text(page)
    assert f'<a href="{reverse("trajectories:upload-verdicts")}">Import human labels</a>' in body

    on_run = judges(client, run=run.name).content.decode()
    assert "No task of run browser-use-cloud has both a human verdict and an automatic one." in on_run
    assert f'<a href="{reverse("metrics:run-detail", args=[run.pk])}">grade this run\'s trajectories</a>' in on_run
    assert api.get(reverse("api-judges-vs-humans"), {"run": run.name}).json()["empty_reasons"] == [
        "No human verdict on run browser-use-cloud yet: import human labels (a file of them, on the verdict import "
        "page or with manage.py import_verdicts) or grade trajectories on their pages."]


def test_no_automatic_verdict_says_to_run_the_outcome_judge_or_import_judge_outputs(om2w, client, api):
    human_labels(om2w)
    run = AgentRun.objects.get(name="Browser Use")
    body = judges(client, run=run.name).content.decode()
    assert re.findall(r'data-reason="(\w+)"', body) == ["no_automatic"]
    assert f'<a href="{reverse("metrics:judge-outcomes", args=[run.pk])}">Judge this run\'s outcomes</a>' in body
    assert f'<a href="{reverse("trajectories:upload-verdicts")}">import judge outputs</a>' in body
    assert api.get(reverse("api-judges-vs-humans"), {"benchmark": OM2W}).json()["empty_reasons"] == [
        "No automatic verdict on online-mind2web yet: run the outcome judge from a run's page, or import a judge's "
        "outputs (on the verdict import page or with manage.py import_verdicts)."]


def test_humans_and_judges_on_different_runs_say_which_tasks_each_covers(om2w, api):
    human_labels(om2w)
    browser_use_cloud(om2w)
    # The humans labelled the 30 tasks of the file on the six agents' runs; browser-use's judge the 15 of its
    # folder on its own run: three tasks are in both, but never on one run. The first ten ids of each, sorted.
    [reason] = api.get(reverse("api-judges-vs-humans"), {"benchmark": OM2W}).json()["empty_reasons"]
    assert reason == (
        "Human verdicts cover 30 tasks (005be9dd91c95669d6ddde9ae667125c, 046138801a05ddf56ad94e8672942496, "
        "0b51b4fa0295ae80ccd176ebdad6fff6, 123e8c2fc453f55fadd1d0b9aaf94df4, 323bd85e3559655d89e5496b951a25e8, "
        "34ccd15a8ea8fd3895af83f5ccf62369, 3f312ae3efc3c3e90ababe050dd4e7ae, 4091bdd3fa64a5b0d912bc08eaf9c824, "
        "48c73f3f53e2611c4a1052457c1033db, 561693d6eec7bbfba3fefe9e4b26decb and 20 more) of online-mind2web, "
        "automatic verdicts 15 tasks (0059adc6b12a3822305deb68929b2de8, 005be9dd91c95669d6ddde9ae667125c, "
        "0170ca95038b05fa58d463fe627ac605, 01abae9608f2d8752a83e08f136f720c, 046138801a05ddf56ad94e8672942496, "
        "05483c50cc9b04c8ac44c574758fb2bd, 0632e496d37badee0350dad358f047c5, 070c907d34a4ce71dfdbea38f9c5d4d8, "
        "07bdc595306729a028ba06cc7451a80a, 07ec4a12cba8090e2dc524d558ac7675 and 5 more), never the same task of "
        "one run, so no source can be read against the humans: import the humans' labels into the run the judges "
        "judged, or judge the run the humans graded.")


def test_on_one_run_a_grade_and_a_judge_on_different_tasks(client):
    run = AgentRunFactory(name="shop", benchmark="webarena")
    graded = TrajectoryFactory(run=run, task=TaskFactory(task_id="7", number=7))
    judged = TrajectoryFactory(run=run, task=TaskFactory(task_id="8", number=8))
    record_grade(graded, grader("gina"), 1)
    judge = VerdictSource.objects.create(kind=VerdictKind.LLM_JUDGE, name="WebJudge")
    Verdict.objects.create(run=run, task=judged.task, trajectory=judged, source=judge, success=True)
    page = page_text(judges(client, run="shop"))
    assert ("Human verdicts cover 1 task (7) of run shop, automatic verdicts 1 task (8), never the same task of one "
            "run") in page


def test_no_run_of_the_benchmark_says_to_import_one(client, api):
    body = api.get(reverse("api-judges-vs-humans"), {"benchmark": "webvoyager"}).json()
    assert body["empty_reasons"] == ["No run of webvoyager yet: import a run first."]
    assert f'<a href="{reverse("trajectories:upload")}">Import a run</a>' in judges(client).content.decode()


def test_a_ceiling_of_no_pair_of_humans_shows_dashes_and_the_headers_are_explained(agent_e, client):
    body = client.get(reverse("metrics:judges-vs-humans"), {"benchmark": "webvoyager"}).content.decode()
    ceiling = body.split('<tr data-source="human-ceiling"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num" data-metric="confusion">—</td>' in ceiling and "0 · 0" not in ceiling
    header = body.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert header.count("title=") == 11
    assert "negative predictive value" in page_text(client.get(reverse("metrics:judges-vs-humans"),
                                                               {"benchmark": "webvoyager"})).lower()
