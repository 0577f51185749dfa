"""Who may start, cancel or re-run an evaluation: reviewers and admins, and a run's own uploader;
which gold they may score against; and which judge decisions they may read, by the gold of the
scores each decision was used for."""

from django.db.models import Q, QuerySet

from accounts.roles import REVIEWER, has_role
from annotation.permissions import visible_gold
from judges.models import DecisionKind, JudgeDecision
from metrics.models import EvaluationJob, TrajectoryScore

# The default policy scores against the reference gold (approved, past review). Scores and judge
# decisions show the gold they were computed from, so choosing any other gold (each one, submitted
# ones included; a named annotator's) is a reviewer's call.
REFERENCE_GOLD_POLICY = EvaluationJob._meta.get_field("gold_policy").default


def can_evaluate(user, runs) -> bool:
    if not user.is_authenticated:
        return False
    return has_role(user, REVIEWER) or all(run.uploaded_by_id == user.pk for run in runs)


def may_use_gold_policy(user, policy: str) -> bool:
    """A gold policy other than the reference gold needs the reviewer role."""
    return policy == REFERENCE_GOLD_POLICY or has_role(user, REVIEWER)


def can_change_evaluation(user, job) -> bool:
    """Cancel or re-run: the job's runs are the user's to evaluate, against gold the user may choose."""
    return can_evaluate(user, job.runs.all()) and may_use_gold_policy(user, job.gold_policy)


# Questions whose inputs hold gold step text; the others carry only agent and task data.
GOLD_TEXT_KINDS = (DecisionKind.STEP_MATCH, DecisionKind.TRAJECTORY_MATCH)


def visible_decisions(user, queryset: QuerySet | None = None) -> QuerySet:
    """Judge decisions the user may read. A decision holding gold text is shown when a score it was
    used for was computed against gold the user may see; one used by no such score (a comparison
    of two annotators' gold on the agreement page, a reviewer's verdict on one cell) is for
    reviewers only. Decisions without gold text are open to every account."""
    queryset = JudgeDecision.objects.all() if queryset is None else queryset
    if has_role(user, REVIEWER):
        return queryset
    if not user.is_authenticated:
        return queryset.none()
    used_on_visible_gold = TrajectoryScore.decisions.through.objects.filter(
        trajectoryscore__gold__in=visible_gold(user).values("pk")
    ).values("judgedecision_id")
    return queryset.filter(~Q(kind__in=GOLD_TEXT_KINDS) | Q(pk__in=used_on_visible_gold))
