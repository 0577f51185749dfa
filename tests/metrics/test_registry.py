from django.db import models

from judges import questions as q
from metrics.models import TrajectoryScore
from metrics.registry import COUNT, NUMBER, RATE, SCORE_REGISTRY, TEXT, VERDICT

# The model field each kind of score field is stored in.
STORED_AS = {
    RATE: models.FloatField, NUMBER: models.FloatField, VERDICT: models.BooleanField,
    COUNT: models.PositiveIntegerField, TEXT: models.CharField,
}


def test_every_registered_field_is_a_score_column_of_its_type():
    for field in SCORE_REGISTRY:
        column = TrajectoryScore._meta.get_field(field.name)
        assert type(column) is STORED_AS[field.type], field.name


def test_the_registry_names_each_field_once():
    names = [field.name for field in SCORE_REGISTRY]
    assert len(names) == len(set(names))


def test_a_rate_is_kept_in_the_unit_range_by_the_database():
    constrained = {constraint.name for constraint in TrajectoryScore._meta.constraints}
    rates = [field.name for field in SCORE_REGISTRY if field.type == RATE]
    assert rates == ["step_success", "recovery", "repetitiveness", "element_accuracy", "partial_success",
                     "plan_step_success", "key_node_completion"]
    assert {f"score_{name}_in_unit_range" for name in rates} <= constrained


def test_only_aggregated_metrics_are_judged_and_by_a_known_question():
    judged = {field.name: field.judged for field in SCORE_REGISTRY if field.judged}
    assert judged == {
        "step_success": q.STEP_MATCH, "recovery": q.STEP_MATCH, "plan_step_success": q.STEP_MATCH,
        "partial_success": q.REQUIREMENTS,
        "grounded": q.GROUNDEDNESS, "relevant": q.GROUNDEDNESS, "correct": q.GROUNDEDNESS,
    }
    assert all(field.aggregated for field in SCORE_REGISTRY if field.judged)
    assert set(judged.values()) <= set(q.KINDS)


def test_only_aggregated_metrics_are_left_out_of_summaries_or_hidden():
    """The two flags choose among the aggregated metrics: set on another field, they would do nothing."""
    flagged = [field for field in SCORE_REGISTRY if not field.summarized or field.hidden_by_default]
    assert flagged and all(field.aggregated for field in flagged)
