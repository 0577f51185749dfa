"""The openai judge against a model that really generates: SmolLM2-135M-Instruct served by
llama.cpp's OpenAI-compatible server on loopback (`judges.llama_server`). With structured output
every answer parses at the first try; without it, what does not parse is stored as an error,
never as a verdict or a score. Needs .venv-llm (bin/setup-local-model, which .ci/run calls before the
suite): without it these tests fail, they are not skipped."""

import pytest
from django.conf import settings
from django.core.management import call_command

from judges.llama_server import MODEL_NAME, LlamaServer, LocalModelUnavailable
from judges.models import JudgeDecision, StructuredOutputMode
from judges.outcome_judging import judge_outcomes
from judges.outcome_questions import SOURCE_NAME
from metrics.models import EvaluationJob, TrajectoryScore
from metrics.services.evaluation import create_evaluation, start_evaluation
from tests.factories import JudgeConfigFactory
from trajectories.models import AgentRun, Verdict

from .conftest import import_run

pytestmark = [pytest.mark.django_db, pytest.mark.local_model]

METRICS = ("step_success", "recovery", "repetitiveness", "element_accuracy", "partial_success", "grounded",
           "relevant", "correct", "success", "check_success", "plan_step_success", "key_node_completion")
# One request at a time (the server answers one at a time), each given the time a 2-core machine needs, and
# answers bounded: asked without a schema, the model may write until its context is full.
OPTIONS = {"concurrency": 1, "timeout": 300, "max_retries": 1, "screenshots": False, "max_answer_tokens": 512}


@pytest.fixture(scope="session")
def local_model(tmp_path_factory):
    try:
        log = tmp_path_factory.mktemp("llama") / "server.log"
        with LlamaServer(settings.BASE_DIR / ".venv-llm", log=log) as server:
            yield server
    except LocalModelUnavailable as error:
        pytest.fail(f"the local model cannot be served: {error}")


def _config(server, name: str, mode: str):
    """Marked as having passed its endpoint test (`judges.endpoint_checks`, tested on its own): under `none`
    a small model's test may fail, and what its failed answers become is what is tested here."""
    return JudgeConfigFactory(name=name, backend="openai", model=MODEL_NAME, base_url=server.base_url,
                              options={**OPTIONS, "structured_output": mode}, tested=True)


def _evaluate_demo_runs(config, capture, capsys) -> list[EvaluationJob]:
    with capture(execute=True):
        call_command("load_demo", verbosity=0)
    capsys.readouterr()  # what it printed
    jobs = []
    for run in AgentRun.objects.order_by("name"):
        with capture(execute=True):
            job = create_evaluation(runs=[run], judge_config=config)
            start_evaluation(job)
        job.refresh_from_db()
        jobs.append(job)
    return jobs


def _every_metric_is_a_number_or_null_with_its_reason(scores):
    for score in scores:
        assert score.error == "", score.error
        reasons = score.details.get("null_reasons", {})
        for name in METRICS:
            value = getattr(score, name)
            assert value is not None or reasons.get(name), f"{score.trajectory}: {name} is null without a reason"
            if value is not None:
                assert name not in reasons


def test_with_structured_output_every_answer_parses_at_the_first_try(local_model, om2w, capsys,
                                                                     django_capture_on_commit_callbacks):
    config = _config(local_model, "smollm2", "auto")
    jobs = _evaluate_demo_runs(config, django_capture_on_commit_callbacks, capsys)
    assert [(job.status, job.failed, job.partly_scored) for job in jobs] == [("done", 0, 0)] * 2
    scores = TrajectoryScore.objects.filter(job__in=jobs)
    assert scores.count() == 3
    _every_metric_is_a_number_or_null_with_its_reason(scores)

    run = import_run(om2w / "abp_run", "abp", capsys)
    report = judge_outcomes(run, config)
    assert (report.total, report.judged, report.errors) == (15, 15, [])
    assert Verdict.objects.filter(run=run, source__name=SOURCE_NAME).count() == 15

    decisions = JudgeDecision.objects.filter(backend="openai")
    assert list(decisions.exclude(error="").values_list("kind", "error")) == []
    asked = decisions.exclude(structured_output="")  # the others were answered without the model
    assert asked.count() > 15 and asked.exclude(repairs=0).count() == 0
    # llama.cpp's server refuses OpenAI's spelling (422) and takes its own, which auto found and kept.
    assert set(asked.values_list("structured_output", flat=True)) == {"json_object_schema"}
    assert StructuredOutputMode.objects.get(base_url=local_model.base_url).mode == "json_object_schema"


def test_without_structured_output_what_does_not_parse_is_an_error_never_a_verdict(
        local_model, om2w, capsys, django_capture_on_commit_callbacks):
    config = _config(local_model, "smollm2-unconstrained", "none")
    jobs = _evaluate_demo_runs(config, django_capture_on_commit_callbacks, capsys)
    scores = TrajectoryScore.objects.filter(job__in=jobs).prefetch_related("decisions")
    _every_metric_is_a_number_or_null_with_its_reason(scores)
    for score in scores:
        failed = [decision for decision in score.decisions.all() if decision.error]
        assert score.failed_questions == len(failed)

    run = import_run(om2w / "abp_run", "abp", capsys)
    report = judge_outcomes(run, config)
    assert report.judged + len(report.errors) == 15
    verdicts = set(Verdict.objects.filter(run=run, source__name=SOURCE_NAME).values_list("task__task_id", flat=True))
    assert len(verdicts) == report.judged and not verdicts & {item["task"] for item in report.errors}

    asked = JudgeDecision.objects.filter(backend="openai").exclude(structured_output="", error="")
    assert set(asked.values_list("structured_output", flat=True)) <= {"none", ""}
    for decision in asked.exclude(error=""):
        assert decision.score is None and decision.output == {}
