import csv
import io
import json

import pytest

from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db


def test_scores_filter_by_run_site_and_success(api, platform):
    body = api.get("/api/scores/?run=agent-a&site=shopping_admin").json()
    assert [(row["task_id"], row["step_success"]) for row in body["results"]] == [("101", 1.0), ("102", 2 / 3)]
    failed_tasks = api.get("/api/scores/?run=agent-a&success=false").json()["results"]
    assert [row["task_id"] for row in failed_tasks] == ["103"]
    job = platform["jobs"]["agent-b"].pk
    assert api.get(f"/api/scores/?job={job}").json()["count"] == 4
    assert api.get(f"/api/evaluations/{job}/scores/").json()["count"] == 4
    assert api.get("/api/evaluations/999/scores/").status_code == 404


def test_aggregates_per_scope(api, platform):
    rows = api.get("/api/aggregates/?run=agent-a&scope=site&metric=step_success").json()["results"]
    assert {row["group"]: (row["mean"], row["count"], row["null_count"]) for row in rows} == {
        "gitlab": (0.0, 1, 0), "reddit+shopping": (None, 0, 1), "shopping_admin": (pytest.approx(5 / 6), 2, 0),
    }
    outcomes = api.get("/api/aggregates/?run=agent-b&scope=run&metric=outcomes").json()["results"][0]
    early = [row for row in outcomes["data"]["rows"] if row["reason"] == "repeated_action"]
    assert early[0]["count"] == 4


def test_leaderboard_rows_come_from_the_latest_evaluation(api, platform):
    rows = api.get("/api/leaderboard/?sort=-step_success").json()["results"]
    assert [row["name"] for row in rows] == ["agent-b", "agent-a"]
    a = rows[1]
    assert a["evaluation"]["job_id"] == platform["jobs"]["agent-a"].pk and a["evaluation"]["judge"] == "exact"
    assert a["metrics"]["step_success"] == {"mean": pytest.approx(5 / 9), "std": pytest.approx(0.509175, abs=1e-6),
                                            "count": 3, "null_count": 1}
    assert a["metrics"]["success"]["mean"] == 0.75 and a["scored"] == 4
    assert a["lengths"]["pairs"] == 3
    by_site = api.get("/api/leaderboard/?site=gitlab&paradigm=step_by_step").json()["results"]
    assert [(row["name"], row["metrics"]["step_success"]["mean"]) for row in by_site] == [("agent-a", 0.0)]


def test_leaderboard_refuses_unknown_choices(api, platform):
    response = api.get("/api/leaderboard/?sort=height&paradigm=none")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"sort", "paradigm"}


def test_site_breakdown(api, platform):
    body = api.get("/api/leaderboard/sites/?metric=success").json()
    assert body["sites"] == ["gitlab", "reddit+shopping", "shopping_admin"]
    b = next(row for row in body["results"] if row["name"] == "agent-b")
    assert [cell["mean"] for cell in b["sites"]] == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("public", [False, True])
def test_anonymous_leaderboard_only_when_public(settings, platform, public):
    settings.PUBLIC_LEADERBOARD = public
    anonymous = client_for(None)
    expected = 200 if public else 401
    assert anonymous.get("/api/leaderboard/").status_code == expected
    assert anonymous.get("/api/leaderboard/sites/").status_code == expected
    assert anonymous.get("/api/exports/leaderboard.csv").status_code == expected
    assert anonymous.get("/api/scores/").status_code == 401  # everything else stays private


def test_comparison_of_two_runs(api, platform):
    body = api.get("/api/comparisons/?baseline=agent-a&candidate=agent-b&metric=step_success&limit=2").json()
    assert (body["baseline"]["name"], body["candidate"]["name"], body["shared_tasks"]) == ("agent-a", "agent-b", 4)
    step = next(item for item in body["metrics"] if item["metric"] == "step_success")
    assert step["overall"]["pairs"] == 3
    assert step["overall"]["mean_difference"] == pytest.approx(1 / 9)
    assert step["overall"]["ci_low"] <= step["overall"]["mean_difference"] <= step["overall"]["ci_high"]
    gitlab = next(site for site in step["by_site"] if site["site"] == "gitlab")
    assert (gitlab["baseline_mean"], gitlab["candidate_mean"]) == (0.0, 1.0)
    assert [(task["task_id"], task["difference"]) for task in body["differing_tasks"]] == [
        ("103", 1.0), ("102", pytest.approx(-2 / 3))]
    link = body["differing_tasks"][0]["side_by_side"]
    assert link.startswith("http://testserver/api/comparisons/tasks/") and "baseline=agent-a" in link
    aligned = api.get(link).json()
    assert [side["name"] for side in aligned["sides"]] == ["agent-a", "agent-b"] and aligned["same_gold"]


def test_side_by_side_marks_deviation_and_recovery(api, platform):
    task = platform["tasks"][0]
    body = api.get(f"/api/comparisons/tasks/{task.pk}/?baseline=agent-a&candidate=agent-b").json()
    first = body["rows"][0]  # agent-b's detour before gold step 1
    assert (first["kind"], first["gold_step"]) == ("before", 1)
    detour = first["sides"][1]["cells"][0]
    assert (detour["step"], detour["action"], detour["left_path"], detour["off_path"]) == (1, "click [9]", 1, True)
    gold_1 = body["rows"][1]
    back = gold_1["sides"][1]["cells"][0]
    assert (gold_1["gold_texts"], back["step"], back["came_back"], back["recovery_cost"]) == (["click [1]"], 2, 1, 1)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("baseline=agent-a&candidate=agent-a", "candidate"),
        ("baseline=agent-a&candidate=nobody", "candidate"),
        ("baseline=agent-a", "candidate"),
        ("baseline=agent-a&candidate=agent-b&metric=speed", "metric"),
        ("baseline=agent-a&candidate=agent-b&judge=offline", "baseline"),
    ],
)
def test_comparison_errors_name_the_parameter(api, platform, query, field):
    response = api.get(f"/api/comparisons/?{query}")
    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()


def test_scores_export_csv_columns_and_values(api, platform):
    response = api.get("/api/exports/scores.csv?run=agent-a")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == 'attachment; filename="scores-agent-a.csv"'
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    columns = [column["name"] for column in api.get("/api/exports/columns/").json()["scores"]]
    assert list(rows[0]) == columns
    assert [(row["task_id"], row["step_success"], row["success"]) for row in rows] == [
        ("101", "1.0", "True"), ("102", "0.6666666666666666", "True"), ("103", "0.0", "False"), ("104", "", "True"),
    ]


def test_run_exports_as_json(api, platform):
    both = json.loads(api.get("/api/exports/aggregates.json?run=agent-a&run=agent-b").getvalue())
    assert {row["run"] for row in both} == {"agent-a", "agent-b"}
    job = platform["jobs"]["agent-b"].pk
    decisions = json.loads(api.get(f"/api/exports/decisions.json?run=agent-b&job={job}").getvalue())
    assert {row["evaluation"] for row in decisions} == {job} and decisions[0]["kind"] == "step_match"


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/exports/scores.csv", "run"),
        ("/api/exports/scores.csv?run=nobody", "run"),
        ("/api/exports/scores.csv?run=agent-a&run=agent-b&job=1", "job"),
        ("/api/exports/scores.csv?run=agent-a&job=999", "job"),
        ("/api/exports/scores.csv?run=agent-a&judge=offline", "run"),
    ],
)
def test_export_errors_are_json(api, platform, url, field):
    response = api.get(url, HTTP_ACCEPT="text/csv")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert field in response.json()["errors"]


def test_leaderboard_and_gold_exports(api, platform, users):
    board = list(csv.DictReader(io.StringIO(api.get("/api/exports/leaderboard.csv?sort=name").content.decode())))
    assert [(row["run"], row["success"]) for row in board] == [("agent-a", "0.75"), ("agent-b", "0.25")]
    gold = api.get("/api/exports/gold.json?task_id=103").json()
    assert [(item["task_id"], len(item["steps"])) for item in gold["gold"]] == [("103", 3)]
    sheet = client_for(users["reviewer"]).get("/api/exports/gold.xlsx")
    assert sheet.status_code == 200 and sheet.content[:2] == b"PK"
    assert api.get("/api/exports/gold.pdf").status_code == 404
    assert api.get("/api/exports/gold.csv?status=lost").status_code == 400
