import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judges.backends.exact import ExactBackend
from judges.models import JudgeConfig
from metrics.models import Aggregate, EvaluationJob, TrajectoryScore
from metrics.services import evaluation
from tests.factories import (
    AgentRunFactory,
    GoldStepFactory,
    GoldTrajectoryFactory,
    JudgeConfigFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
)

pytestmark = pytest.mark.django_db


def _trajectory(run, task, actions, **fields):
    trajectory = TrajectoryFactory(run=run, task=task, step_count=len(actions), **fields)
    for index, action in enumerate(actions, start=1):
        StepFactory(trajectory=trajectory, index=index, action=action, planned_action=action)
    return trajectory


def _gold(task, texts, status="approved", **fields):
    gold = GoldTrajectoryFactory(task=task, status=status, **fields)
    for index, text in enumerate(texts, start=1):
        GoldStepFactory(gold=gold, index=index, text=text)
    return gold


@pytest.fixture
def exact_judge():
    return JudgeConfigFactory(name="exact", backend="exact")


@pytest.fixture
def run():
    return AgentRunFactory(name="agent-a")


def _evaluate(run, judge, **kwargs):
    job = evaluation.create_evaluation(runs=[run], judge_config=judge, **kwargs)
    evaluation.start_evaluation(job)
    return job


def test_table_1_worked_example_through_a_job(run, exact_judge, django_capture_on_commit_callbacks):
    task = TaskFactory(requirements=[])
    _gold(task, ["click [1]", "click [2]", "click [3]"])
    _trajectory(run, task, ["click [9]", "click [1]", "click [2]", "scroll [down]", "click [3]", "go_back"],
                final_answer=None, outcome_status="no_stop")
    with django_capture_on_commit_callbacks(execute=True):
        job = _evaluate(run, exact_judge)
    job.refresh_from_db()
    assert (job.status, job.total, job.done, job.failed) == ("done", 1, 1, 0)
    score = TrajectoryScore.objects.get(job=job)
    assert score.error == ""
    assert score.step_success == 1.0
    assert (score.deviations, score.recoveries, score.recovery) == (2, 2, 1.0)
    assert score.repetitiveness == 1.0
    assert score.element_accuracy == 1.0
    assert score.partial_success is None
    assert score.grounded is None and score.correct is None
    assert (score.agent_steps, score.gold_steps, score.matched_steps) == (6, 3, 3)
    assert score.details["step_success"]["matched"][0] == {"gold_step": 1, "agent_step": 2, "score": 1.0}
    assert score.decisions.exists()
    assert Aggregate.objects.get(job=job, run=run, scope="run", metric="recovery").mean == 1.0


def test_task_without_gold_has_null_gold_metrics(run, exact_judge, django_capture_on_commit_callbacks):
    _trajectory(run, TaskFactory(), ["click [1]", "click [1]"], final_answer=None, outcome_status="no_stop")
    with django_capture_on_commit_callbacks(execute=True):
        job = _evaluate(run, exact_judge)
    job.refresh_from_db()
    score = job.scores.get()
    assert score.gold is None
    assert score.step_success is None and score.recovery is None and score.gold_steps is None
    assert score.repetitiveness == 0.5


def test_each_policy_scores_every_submitted_gold(run, exact_judge, django_capture_on_commit_callbacks):
    task = TaskFactory()
    first = _gold(task, ["click [1]"], status="approved")
    second = _gold(task, ["click [2]"], status="submitted")
    _gold(task, ["click [3]"], status="draft")
    _trajectory(run, task, ["click [1]"])
    with django_capture_on_commit_callbacks(execute=True):
        job = _evaluate(run, exact_judge, gold_policy="each")
    job.refresh_from_db()
    scores = {score.gold_id: score.step_success for score in job.scores.all()}
    assert scores == {first.pk: 1.0, second.pk: 0.0}


def test_approved_policy_uses_only_approved_gold(run, exact_judge, django_capture_on_commit_callbacks):
    task = TaskFactory()
    _gold(task, ["click [2]"], status="submitted")
    approved = _gold(task, ["click [1]"], status="approved")
    _trajectory(run, task, ["click [1]"])
    with django_capture_on_commit_callbacks(execute=True):
        job = _evaluate(run, exact_judge)
    job.refresh_from_db()
    assert job.scores.get().gold == approved


def test_one_trajectory_error_is_recorded_and_the_job_finishes(run, exact_judge, django_capture_on_commit_callbacks):
    good = _trajectory(run, TaskFactory(), ["click [1]"])
    broken_task = TaskFactory(eval_config={"eval_types": ["string_match"], "reference_answers": {"bogus": "x"}})
    broken = _trajectory(run, broken_task, ["click [1]"])
    with django_capture_on_commit_callbacks(execute=True):
        job = _evaluate(run, exact_judge)
    job.refresh_from_db()
    assert (job.status, job.done, job.failed) == ("done", 1, 1)
    assert job.scores.get(trajectory=good).error == ""
    error = job.scores.get(trajectory=broken).error
    assert "eval.reference_answers.bogus" in error


def test_cancelled_job_stops(run, exact_judge):
    _trajectory(run, TaskFactory(), ["click [1]"])
    job = evaluation.create_evaluation(runs=[run], judge_config=exact_judge)
    assert evaluation.cancel_evaluation(job)
    job.refresh_from_db()
    assert job.status == "cancelled"
    assert evaluation.begin(job) == []
    assert not evaluation.cancel_evaluation(job)


def test_rerun_recomputes_only_what_changed(run, exact_judge, django_capture_on_commit_callbacks):
    task_a, task_b = TaskFactory(), TaskFactory()
    gold_a = _gold(task_a, ["click [1]"])
    _gold(task_b, ["click [2]"])
    _trajectory(run, task_a, ["click [1]"])
    _trajectory(run, task_b, ["click [2]"])
    with django_capture_on_commit_callbacks(execute=True):
        job = _evaluate(run, exact_judge)
    job.refresh_from_db()
    assert evaluation.pending_chunks(job) == []

    gold_a.steps.update(text="click [7]")
    gold_a.version += 1
    gold_a.save()
    (chunk,) = evaluation.pending_chunks(job)
    before = job.scores.get(gold=gold_a)
    assert chunk == [(before.trajectory_id, gold_a.pk)]

    unchanged = job.scores.exclude(gold=gold_a).get()
    with django_capture_on_commit_callbacks(execute=True):
        rerun = evaluation.rerun_evaluation(job)
    rerun.refresh_from_db()
    assert (rerun.status, rerun.replaces_id) == ("done", job.pk) and rerun.pk != job.pk
    after = rerun.scores.get(gold=gold_a)
    assert after.step_success == 0.0
    assert after.decisions.get(kind="trajectory_match").inputs["gold"][0]["text"] == "click [7]"
    assert rerun.scores.count() == 2
    carried = rerun.scores.exclude(gold=gold_a).get()  # not recomputed: carried over as it was
    assert (carried.computed_at, carried.step_success) == (unchanged.computed_at, unchanged.step_success)
    assert set(carried.decisions.values_list("pk", flat=True)) == set(unchanged.decisions.values_list("pk", flat=True))
    # the replaced evaluation is kept as it was: its id, its start, its numbers
    job.refresh_from_db()
    assert job.status == "done" and job.scores.get(gold=gold_a).step_success == before.step_success == 1.0
    assert job.aggregates.exists() and rerun.aggregates.exists()


def _judge_asks(monkeypatch) -> list[int]:
    """How many questions each ask of the exact backend carried."""
    asks, answer = [], ExactBackend.answer

    def counted(self, questions):
        asks.append(len(questions))
        return answer(self, questions)

    monkeypatch.setattr(ExactBackend, "answer", counted)
    return asks


def _chunk_queries(job, units) -> int:
    with CaptureQueriesContext(connection) as queries:
        evaluation.evaluate_chunk(job.pk, units)
    return len(queries)


def test_a_chunk_asks_the_judge_once_in_a_number_of_queries_that_does_not_grow_with_it(run, exact_judge,
                                                                                       monkeypatch):
    for number in range(8):
        task = TaskFactory(requirements=[f"item {number}", "second item"])
        _gold(task, [f"click [{number}]", "scroll [down]"])
        _trajectory(run, task, [f"click [{number}]", f"click [{number}]", "scroll [down]", "stop [item]"],
                    final_answer="item", outcome_status="answered")
    job = evaluation.create_evaluation(runs=[run], judge_config=exact_judge)
    units = [(unit.trajectory_id, unit.gold_id) for unit in evaluation.plan_units(job)]
    asks = _judge_asks(monkeypatch)
    assert _chunk_queries(job, units[:2]) == _chunk_queries(job, units[2:])
    assert len(asks) == 2  # one ask per chunk, with every question of its trajectories
    job.refresh_from_db()
    assert (job.done, job.failed) == (8, 0)
    # Step matching, 2 requirements and relevance: the 3 repetitions are structured actions (the
    # rule, no judge), and groundedness is not asked of steps that record no observation text.
    assert all(score.decisions.count() == 4 for score in job.scores.all())


def test_a_judge_that_raises_fails_each_trajectory_on_its_own_row(run, exact_judge, monkeypatch,
                                                                 django_capture_on_commit_callbacks):
    def broken(self, questions):
        raise RuntimeError("the judge is down")

    monkeypatch.setattr(ExactBackend, "answer", broken)
    for number in (1, 2):
        task = TaskFactory()
        _gold(task, [f"click [{number}]"])
        _trajectory(run, task, [f"click [{number}]"])
    no_questions = _trajectory(run, TaskFactory(), ["click [3]"], final_answer=None, outcome_status="no_stop")
    with django_capture_on_commit_callbacks(execute=True):
        job = _evaluate(run, exact_judge)
    job.refresh_from_db()
    assert (job.status, job.done, job.failed) == ("done", 1, 2)
    errors = {score.trajectory_id: score.error for score in job.scores.all()}
    assert errors.pop(no_questions.pk) == ""
    assert list(errors.values()) == ["RuntimeError: the judge is down"] * 2


def test_overruled_decision_is_used_on_rerun(run, exact_judge, django_capture_on_commit_callbacks):
    from judges.services import review_step_pair

    task = TaskFactory()
    _gold(task, ["click [1]"])
    _trajectory(run, task, ["click [2]"])
    with django_capture_on_commit_callbacks(execute=True):
        job = _evaluate(run, exact_judge)
    job.refresh_from_db()
    score = job.scores.get()
    assert score.step_success == 0.0
    decision = score.decisions.get(kind="trajectory_match")
    review_step_pair(decision, 1, 1, human_score=1.0, reviewer=GoldTrajectoryFactory().annotator)
    assert len(evaluation.pending_chunks(job)) == 1
    with django_capture_on_commit_callbacks(execute=True):
        rerun = evaluation.rerun_evaluation(job)
    score = rerun.scores.get()
    assert score.step_success == 1.0
    assert score.decisions.filter(kind="step_match", human_score=1.0).exists()


@pytest.mark.django_db(transaction=True)
def test_evaluate_command_waits_and_reports(run, exact_judge, capsys):
    task = TaskFactory()
    _gold(task, ["click [1]"])
    _trajectory(run, task, ["click [1]"])
    call_command("evaluate", "--run", "agent-a", "--judge", "exact", "--param", "tau=0.8", "--wait")
    job = EvaluationJob.objects.get()
    assert job.status == "done" and job.parameters == {"tau": 0.8, "window": 1, "ordered": False}
    assert "1 scored, 0 failed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", "nope"], "run 'nope' does not exist"),
        (["--run", "agent-a", "--judge", "nope"], "no judge named 'nope'; known: exact, offline, openai"),
        (["--run", "agent-a", "--param", "tau=2"], "parameter 'tau' must be a number in [0, 1]"),
        (["--run", "agent-a", "--param", "W=2"], "unknown evaluation parameter 'W'"),
        (["--run", "agent-a", "--gold", "annotator:ghost"], "no user named 'ghost'"),
    ],
)
def test_evaluate_command_errors(run, exact_judge, args, message):
    from django.core.management import CommandError

    with pytest.raises(CommandError) as error:
        call_command("evaluate", *args)
    assert message in str(error.value)
    assert not EvaluationJob.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("backend", ["exact", "offline"])
def test_evaluate_command_names_a_backend_on_a_fresh_database(run, backend, capsys):
    """No JudgeConfig rows at all: a backend's own name is a judge, stored on first use (once)."""
    assert not JudgeConfig.objects.exists()
    for _ in range(2):
        call_command("evaluate", "--run", "agent-a", "--judge", backend, "--wait")
    config = JudgeConfig.objects.get()
    assert (config.name, config.backend) == (backend, backend)
    assert [job.judge_config_id for job in EvaluationJob.objects.all()] == [config.pk, config.pk]
    assert f"judge {backend}" in capsys.readouterr().out
