"""A chunk's new score rows are the same whichever way they are stored: by COPY on PostgreSQL,
by Django's bulk insert on SQLite."""

import pytest
from django.db import connection
from django.utils import timezone

from metrics.models import TrajectoryScore
from metrics.services import evaluation
from metrics.services.scoring import SCORE_FIELDS
from tests.factories import EvaluationJobFactory, GoldTrajectoryFactory, TrajectoryFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the COPY path is PostgreSQL's"),
]


def _new_rows(units) -> dict:
    """Column values as `_store_scores` builds them, with the awkward cases: NULLs, booleans,
    text needing COPY's escapes, nested details with non-ASCII characters."""
    now = timezone.now()
    rows = {}
    for k, unit in enumerate(units):
        fields = {**dict.fromkeys(SCORE_FIELDS), "success_source": "", "check_source": "", "outcome_status": "",
                  "outcome_reason": ""}
        if k:
            fields.update(step_success=0.1 + k / 3, recovery=1.0, agent_steps=k, matched_steps=0, grounded=False,
                          success=True, success_source="string_match", outcome_status="answered")
        rows[unit] = {**fields, "error": "" if k else "KeyError: line\nand\ttab \\ back", "failed_questions": k,
                      "details": {"step_success": {"matched": [[1, 2]], "note": "‘Quest’ \\N \"quoted\""},
                                  "empty": {}, "k": k},
                      "inputs_hash": f"{k:064x}", "computed_at": now}
    return rows


def _stored(job) -> list[dict]:
    """The rows but their ids and when they were computed (Django's bulk insert stamps its own time)."""
    return [{k: v for k, v in row.items() if k not in ("id", "job_id", "computed_at")}
            for row in TrajectoryScore.objects.filter(job=job).order_by("trajectory_id", "gold_id").values()]


def test_copied_score_rows_are_the_rows_the_bulk_insert_stores():
    gold = GoldTrajectoryFactory()
    units = [(TrajectoryFactory().pk, None), (TrajectoryFactory(task=gold.task).pk, gold.pk),
             (TrajectoryFactory().pk, None)]
    copied_job, bulk_job = EvaluationJobFactory(), EvaluationJobFactory()
    rows = _new_rows(units)

    ids = evaluation._insert_scores(copied_job, rows)
    TrajectoryScore.objects.bulk_create([TrajectoryScore(job=bulk_job, trajectory_id=t, gold_id=g, **fields)
                                         for (t, g), fields in rows.items()])

    assert _stored(copied_job) == _stored(bulk_job)
    assert set(copied_job.scores.values_list("computed_at", flat=True)) == {rows[units[0]]["computed_at"]}
    assert ids == {(score.trajectory_id, score.gold_id): score.pk for score in copied_job.scores.all()}


def test_a_row_another_worker_stored_meanwhile_is_kept():
    unit = (TrajectoryFactory().pk, None)
    job = EvaluationJobFactory()
    first = evaluation._insert_scores(job, _new_rows([unit]))
    again = _new_rows([unit])
    again[unit]["error"] = "computed again"
    assert evaluation._insert_scores(job, again) == {}
    assert list(job.scores.values_list("pk", "error")) == [(first[unit], _new_rows([unit])[unit]["error"])]
