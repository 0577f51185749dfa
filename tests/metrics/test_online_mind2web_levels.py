"""Online-Mind2Web's task levels as task subsets: defined and kept up to date by importing the task list
(the real excerpt, 30 of its 300 tasks), and restricting the leaderboard, comparisons, exports and the run
page as any subset does, on the ABP and browser-use runs as published."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from metrics import exports
from metrics.selectors import comparison, leaderboard
from metrics.subsets import run_subsets
from tests.factories import JudgeConfigFactory, UserFactory
from tests.metrics.reports import evaluate
from trajectories.models import AgentRun, TaskSubset
from trajectories.services.tasks import import_task_file

pytestmark = pytest.mark.django_db

EXCERPT = "Online_Mind2Web.excerpt.json"
# From the excerpt by hand: 10 easy, 13 medium, 7 hard entries; three medium and three hard ids carry an update
# suffix, and each subset also holds the earlier id of those: 10, 13 + 3 and 7 + 3 ids.
EASY = ["005be9dd91c95669d6ddde9ae667125c", "34ccd15a8ea8fd3895af83f5ccf62369", "3f312ae3efc3c3e90ababe050dd4e7ae",
        "4091bdd3fa64a5b0d912bc08eaf9c824", "561693d6eec7bbfba3fefe9e4b26decb", "95cad96f2e43f3c0d8efad1331c77c8c",
        "ade4c09ad3fdb1607209750924cd232f", "b6d10e9bd19b4009a02dea0e98f4e1ae", "bf3b311cc8dce16d3de844f4b5875dfd",
        "d71be72aa25c3eab8eea47a0e60382e2"]
HARD = ["0b51b4fa0295ae80ccd176ebdad6fff6", "6ebde509dca8f15c0fa1bd74f071e8d6", "79f0bd7df6e685f30f20025cc6755c0a",
        "79f0bd7df6e685f30f20025cc6755c0a_110325", "824eb7bb0ef1ce40bfd49c12182d9428",
        "824eb7bb0ef1ce40bfd49c12182d9428_110325", "8f2611047de227a2ca8bda13f6e2e5fb",
        "8f2611047de227a2ca8bda13f6e2e5fb_110325", "b7a9a6b5d451164c09bbd27b670bc2ae",
        "bfa2de159be6978acf2702be31a2eeeb"]
# The three tasks of the excerpt that the ABP and browser-use folders (15 tasks each) also hold.
QATAR, MEDIUM_SHARED, HARD_SHARED = EASY[0], "046138801a05ddf56ad94e8672942496", HARD[0]


@pytest.fixture
def om2w(shared_data):
    return shared_data / "agent-outputs" / "online-mind2web"


def subsets() -> dict[str, list[str]]:
    return {subset.name: subset.task_ids for subset in TaskSubset.objects.all()}


def test_importing_the_task_list_defines_a_subset_per_level(om2w, capsys):
    call_command("import_tasks", str(om2w / EXCERPT))
    out = capsys.readouterr().out
    assert "subset online-mind2web-easy: 10 tasks (created)" in out
    assert "subset online-mind2web-medium: 16 tasks (created)" in out
    assert "subset online-mind2web-hard: 10 tasks (created)" in out
    found = subsets()
    assert found["online-mind2web-easy"] == EASY and found["online-mind2web-hard"] == HARD
    medium = found["online-mind2web-medium"]
    assert {"b7258ee05d75e6c50673a59914db412e", "b7258ee05d75e6c50673a59914db412e_110325",
            "c698ff3fc0f6cbce39947c597ab5749b", "c698ff3fc0f6cbce39947c597ab5749b_121425"} <= set(medium)
    subset = TaskSubset.objects.get(name="online-mind2web-easy")
    assert (subset.benchmark, subset.source) == ("online-mind2web", EXCERPT)
    assert subset.description.startswith("Online-Mind2Web tasks of level easy")

    call_command("import_tasks", str(om2w / EXCERPT))
    assert "subset online-mind2web-easy: 10 tasks (unchanged)" in capsys.readouterr().out


def test_a_later_part_of_the_list_keeps_the_subsets_whole_and_moves_a_task_whose_level_changed(om2w, tmp_path):
    import_task_file(om2w / EXCERPT)
    entries = json.loads((om2w / EXCERPT).read_text())
    part = [entry for entry in entries if entry["task_id"] == QATAR]
    part[0]["level"] = "hard"
    (tmp_path / EXCERPT).write_text(json.dumps(part))

    report = import_task_file(tmp_path / EXCERPT)

    assert [(item["name"], item["tasks"], item["outcome"]) for item in report.subsets] == [
        ("online-mind2web-easy", 9, "updated"), ("online-mind2web-medium", 16, "unchanged"),
        ("online-mind2web-hard", 11, "updated")]
    assert QATAR in subsets()["online-mind2web-hard"] and QATAR not in subsets()["online-mind2web-easy"]


def test_a_list_imported_under_another_benchmark_name_defines_its_own_levels(om2w):
    import_task_file(om2w / EXCERPT, benchmark="om2w-2025")
    assert sorted(subsets()) == ["om2w-2025-easy", "om2w-2025-hard", "om2w-2025-medium"]
    assert TaskSubset.objects.get(name="om2w-2025-easy").benchmark == "om2w-2025"


def test_a_list_without_levels_defines_no_subset(om2w, tmp_path):
    entries = json.loads((om2w / EXCERPT).read_text())
    (tmp_path / "tasks.json").write_text(json.dumps([{k: v for k, v in e.items() if k != "level"} for e in entries]))
    assert import_task_file(tmp_path / "tasks.json").subsets == [] and not TaskSubset.objects.exists()


@pytest.fixture
def runs(om2w):
    """The task list, then the ABP and browser-use folders, each evaluated (exact judge: no gold, outcome metrics)."""
    import_task_file(om2w / EXCERPT)
    for folder, name in (("abp_run", "abp"), ("browser_use_cloud", "browser-use-cloud")):
        call_command("import_trajectories", str(om2w / folder), "--run", name, verbosity=0, stdout=io.StringIO())
    judge = JudgeConfigFactory(name="exact", backend="exact")
    return {name: (AgentRun.objects.get(name=name), evaluate(AgentRun.objects.get(name=name), judge))
            for name in ("abp", "browser-use-cloud")}


def test_the_leaderboard_comparisons_exports_and_the_run_page_keep_to_a_level(runs, client):
    abp, abp_job = runs["abp"]
    browser_use, browser_use_job = runs["browser-use-cloud"]
    for level, task in (("easy", QATAR), ("medium", MEDIUM_SHARED), ("hard", HARD_SHARED)):
        name = f"online-mind2web-{level}"
        board = leaderboard.leaderboard(leaderboard.LeaderboardFilters(subset=name))
        assert {row.name: row.scored for row in board.rows} == {"abp": 1, "browser-use-cloud": 1}
        subset = TaskSubset.objects.get(name=name)
        assert comparison.compare_runs(abp, browser_use, subset=subset, resamples=50).shared_tasks == 1
        assert list(exports.scores_frame({abp.pk: abp_job.pk}, subset)["task_id"]) == [task]
    whole = leaderboard.leaderboard(leaderboard.LeaderboardFilters())
    assert {row.name: row.scored for row in whole.rows} == {"abp": 15, "browser-use-cloud": 15}

    listed = {item.subset.name: item.trajectories for item in run_subsets(browser_use, browser_use_job.pk)}
    assert listed == {"online-mind2web-easy": 1, "online-mind2web-hard": 1, "online-mind2web-medium": 1}
    client.force_login(UserFactory())
    page = client.get(reverse("metrics:run-detail", args=[browser_use.pk])).content.decode()
    assert "?subset=online-mind2web-medium" in page and "1 / 16" in page and "1 / 10" in page
    api = client.get(reverse("api-leaderboard"), {"subset": "online-mind2web-hard"}).json()
    assert {row["name"] for row in api["results"]} == {"abp", "browser-use-cloud"}
