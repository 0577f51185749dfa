"""factory_boy factories for every model; tests build the rows they need from these."""

import hashlib

import factory
from django.contrib.auth import get_user_model

from annotation.models import GoldStep, GoldTrajectory
from judges.models import JudgeConfig, JudgeDecision
from metrics.models import EvaluationJob, TrajectoryScore
from trajectories.formats.agent_steps import action_parts
from trajectories.models import AgentRun, ImportJob, Screenshot, Step, Task, TaskResult, Trajectory


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.django.Password("pw-for-tests-123")


class TaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Task

    benchmark = "webarena"
    number = factory.Sequence(lambda n: 10_000 + n)
    task_id = factory.LazyAttribute(lambda t: str(t.number))
    intent = factory.Sequence(lambda n: f"What is the answer to question {n}?")
    sites = factory.LazyFunction(lambda: ["shopping_admin"])
    start_url = "__SHOPPING_ADMIN__"
    eval_types = factory.LazyFunction(lambda: ["string_match"])
    eval_config = factory.LazyFunction(lambda: {"eval_types": ["string_match"], "reference_answers": {}})


class AgentRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AgentRun

    name = factory.Sequence(lambda n: f"run-{n}")
    agent = "test-agent"
    model = "test-model"


class TrajectoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Trajectory

    run = factory.SubFactory(AgentRunFactory)
    task = factory.SubFactory(TaskFactory)
    outcome_status = "answered"
    final_answer = "42"
    step_count = 1  # a trajectory of agent steps, not an outcome record (those are results-only)
    content_hash = factory.Sequence(lambda n: hashlib.sha256(str(n).encode()).hexdigest())


class TaskResultFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TaskResult

    run = factory.SubFactory(AgentRunFactory)
    task = factory.SubFactory(TaskFactory)
    success = True
    source_name = "results.csv"


class StepFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Step

    trajectory = factory.SubFactory(TrajectoryFactory)
    index = factory.Sequence(lambda n: n + 1)
    url = "http://localhost:7780/admin"
    action = "scroll [down]"
    # The parts of the action, as the WebArena readers store them, unless a test gives its own.
    action_type = factory.LazyAttribute(lambda step: action_parts(step.action, "").type)
    element_id = factory.LazyAttribute(lambda step: action_parts(step.action, "").element_id)
    element_label = factory.LazyAttribute(lambda step: action_parts(step.action, "").element_label)
    action_value = factory.LazyAttribute(lambda step: action_parts(step.action, "").value)
    press_enter = factory.LazyAttribute(lambda step: action_parts(step.action, "").press_enter)


class ScreenshotFactory(factory.django.DjangoModelFactory):
    """A stored screenshot file (a few bytes of PNG signature: the viewer streams, never decodes)."""

    class Meta:
        model = Screenshot

    image = factory.django.FileField(filename="shot.png", data=factory.Sequence(lambda n: b"\x89PNG\r\n" + str(n).encode()))
    sha256 = factory.Sequence(lambda n: hashlib.sha256(f"shot-{n}".encode()).hexdigest())


class ImportJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ImportJob

    run = factory.SubFactory(AgentRunFactory)
    upload = factory.django.FileField(filename="run.jsonl", data=b'{"schema": "trajectory/v1"}\n')


class GoldTrajectoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GoldTrajectory
        skip_postgeneration_save = True

    task = factory.SubFactory(TaskFactory)
    annotator = factory.SubFactory(UserFactory)
    source = "web"

    @factory.post_generation
    def reference(gold, create, extracted, **kwargs):
        """As on approval: the task's first approved gold becomes its reference."""
        if create and extracted is not False and gold.status == "approved":
            from annotation.services.reference import assign_missing_references

            assign_missing_references([gold.task_id])
            gold.refresh_from_db(fields=["is_reference"])


class GoldStepFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GoldStep

    gold = factory.SubFactory(GoldTrajectoryFactory)
    index = factory.Sequence(lambda n: n + 1)
    text = "Scroll down"


class JudgeConfigFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = JudgeConfig
        django_get_or_create = ("name",)

    name = "offline"
    backend = "offline"

    class Params:
        # An LLM judge whose endpoint answered its test: only then may a job start on it.
        tested = factory.Trait(last_test=factory.LazyFunction(lambda: {
            "ok": True, "tested_at": "2026-01-05T10:00:00+00:00", "backend": "openai", "error": "", "questions": []}))


class JudgeDecisionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = JudgeDecision

    kind = "step_match"
    cache_key = factory.Sequence(lambda n: hashlib.sha256(f"key{n}".encode()).hexdigest())
    inputs_hash = factory.Sequence(lambda n: hashlib.sha256(f"in{n}".encode()).hexdigest())
    inputs = factory.LazyFunction(lambda: {"gold": "Scroll down", "agent": "scroll [down]"})
    score = 1.0
    backend = "offline"


class EvaluationJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EvaluationJob

    judge_config = factory.SubFactory(JudgeConfigFactory)
    parameters = factory.LazyFunction(lambda: {"tau": 0.7, "window": 1, "ordered": False})


class TrajectoryScoreFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TrajectoryScore

    job = factory.SubFactory(EvaluationJobFactory)
    trajectory = factory.SubFactory(TrajectoryFactory)


def run_with_one_step_gold(name: str, trajectories: int):
    """A run of two-step trajectories on new tasks, each task with one-step approved gold; committed
    at once, for tests whose worker processes read a real database."""
    from django.db import transaction

    run, annotator = AgentRunFactory(name=name), UserFactory()
    with transaction.atomic():
        for number in range(trajectories):
            task = TaskFactory()
            gold = GoldTrajectoryFactory(task=task, annotator=annotator, status="approved")
            GoldStepFactory(gold=gold, index=1, text=f"Click on the 'Item {number}' link")
            trajectory = TrajectoryFactory(run=run, task=task, final_answer=None, outcome_status="no_stop")
            for index in (1, 2):
                StepFactory(trajectory=trajectory, index=index, action=f"click [{number}{index}]")
    return run
