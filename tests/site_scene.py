"""A platform holding something for every page to show, for the walks over the whole site: two evaluated
runs with gold, a run of named sources' verdicts and human grades, a task without text, submitted gold
to review, an import with its report, a quality flag, a judge decision, and runs, agents and tasks named
with 200 characters, with and without spaces."""

from datetime import timedelta

from django.contrib.auth.models import Group
from django.db.models import F
from django.utils import timezone

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER
from annotation.models import GoldFlag, GoldTrajectory
from judges.models import OutcomeJob
from metrics.services.evaluation import create_evaluation, start_evaluation
from tests import factories
from tests.api.conftest import make_platform
from tests.trajectories.verdict_samples import write_verdict_run
from trajectories.models import AgentRun, OutcomeGrade, TaskSubset
from trajectories.services.import_jobs import create_import_job, run_import_job
from trajectories.services.ingest import import_paths

LONG_WORD = "w" * 200  # a name without a space: wider than any cell, it may break
LONG_WORDS = " ".join(["WebVoyager", "Browser", "Use", "Agent-E", "Answered"]
                      + [f"word{number}" for number in range(40)])[:200]  # 200 characters of words that fit


def account(role: str | None, username: str):
    user = factories.UserFactory(username=username)
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def make_scene(tmp_path, shared_data) -> dict:
    """Commits its evaluations: call it with on-commit callbacks executed (or outside a transaction)."""
    users = {"no role": account(None, "rob"), "annotator": account(ANNOTATOR, "alice"),
             "reviewer": account(REVIEWER, "rita"), "admin": account(ADMIN, "adam")}
    users["admin"].is_staff = True
    users["admin"].save()
    platform = make_platform({"reader": users["no role"], "annotator": users["annotator"],
                              "reviewer": users["reviewer"], "admin": users["admin"]})
    tasks, runs = platform["tasks"], platform["runs"]
    tasks[3].intent = ""  # named by its files without text
    tasks[3].save()
    for name in (LONG_WORD, LONG_WORDS):
        run = AgentRun.objects.create(name=name, agent=f"agent {name}"[:200], model=f"model {name}"[:200],
                                     uploaded_by=users["no role"])
        trajectory = factories.TrajectoryFactory(run=run, task=tasks[0], final_answer=name, step_count=1)
        factories.StepFactory(trajectory=trajectory, index=1, action=f"type [3] [{name}]", reasoning=name)
        start_evaluation(create_evaluation(runs=[run], judge_config=platform["judge"], user=users["admin"]))
    long_task = factories.TaskFactory(task_id="long-" + "t" * 120, intent=LONG_WORDS + " " + LONG_WORD)
    factories.TrajectoryFactory(run=runs["agent-a"], task=long_task, final_answer=LONG_WORD)
    voices = factories.AgentRunFactory(name="voices", uploaded_by=users["no role"])
    assert import_paths([write_verdict_run(tmp_path / "voices")], voices).ok
    for grader, value in (("alice", 1.0), ("rita", 0.0)):
        OutcomeGrade.objects.create(run=runs["agent-a"], task=tasks[0], grader_name=grader, value=value,
                                    trajectory=runs["agent-a"].trajectories.get(task=tasks[0]))
    submitted = factories.GoldTrajectoryFactory(task=tasks[3], status="submitted", annotator=users["annotator"])
    factories.GoldStepFactory(gold=submitted, index=1, text=LONG_WORDS)
    factories.GoldStepFactory(gold=submitted, index=2, text=f"TYPE: {LONG_WORD}", action_type="type",
                              element_role="textbox", element_name=LONG_WORDS, value=LONG_WORD)  # a structured step
    flag = GoldFlag.objects.create(gold=submitted, kind=GoldFlag.Kind.ONE_STEP, message="One step only.")
    with (shared_data / "trajectory-samples" / "llama3-8b_render_6.html").open("rb") as upload:
        job = create_import_job(runs["agent-b"], [("render_6_" + "d" * 150 + ".html", upload)],
                                user=users["no role"])
    run_import_job(job.pk)
    factories.JudgeDecisionFactory(model="model-" + "m" * 150)
    TaskSubset.objects.create(name="first-two", benchmark="webarena", task_ids=["101", "102"])
    outcome_judge = factories.JudgeConfigFactory(name="outcome", backend="openai", model="gpt-4o-mini")
    OutcomeJob.objects.create(run=runs["agent-a"], created_by=users["admin"], judge_config=outcome_judge)
    return {"users": users, "platform": platform, "import_job": job, "flag": flag, "gold": submitted,
            "long_task": long_task}


def change_gold(scene: dict) -> None:
    """Once the evaluations have run: the gold of a task changes, and their pages say so."""
    GoldTrajectory.objects.filter(task=scene["platform"]["tasks"][0], status="approved").update(
        version=F("version") + 1, updated_at=timezone.now() + timedelta(seconds=1))


def walk_starts(scene: dict) -> list[str]:
    """Pages no link leads to without a choice made in a form: the import's page (its uploader's and the
    admins'), a comparison of two runs, a form for an export and the outcome judge of a run."""
    runs = scene["platform"]["runs"]
    return ["/", "/docs/", f"/imports/{scene['import_job'].pk}/", "/compare/?baseline=agent-a&candidate=agent-b",
            "/exports/scores.csv", f"/runs/{runs['agent-a'].pk}/judge-outcomes/"]
