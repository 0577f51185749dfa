from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from infrastructure.api import NameField
from judges.selectors import UnknownJudge, judge_config_required
from metrics.models import EvaluationJob, GoldPolicy, TrajectoryScore, parse_gold_policy
from metrics.selectors.jobs_and_scores import job_progress, scores_off_reference, tasks_without_reference
from metrics.services.scoring import NULL_REASONS, SCORE_FIELDS
from trajectories.models import AgentRun


class EvaluatedRunsSerializer(serializers.Serializer):
    """The runs an evaluation names, read first: who may evaluate them is checked before the rest of the body."""

    runs = NameField(slug_field="name", queryset=AgentRun.objects.all(), many=True,
                                        allow_empty=False)


class EvaluationRequestSerializer(EvaluatedRunsSerializer):
    judge = serializers.CharField(required=False, allow_blank=True,
                                  help_text="A judge configuration's name, or a backend: exact, offline, openai")
    gold_policy = serializers.CharField(
        default=GoldPolicy.REFERENCE,
        help_text="reference (default), best, each or annotator=NAME; 'approved' is the older name of 'reference'. "
                  "Any policy but the reference gold needs the reviewer role.",
    )
    gold_annotator = NameField(
        slug_field="username", queryset=get_user_model().objects.all(), required=False
    )
    parameters = serializers.DictField(required=False, default=dict)

    def validate_judge(self, name: str) -> str:
        if name:
            try:
                judge_config_required(name)
            except UnknownJudge as exc:
                raise serializers.ValidationError(str(exc)) from None
        return name

    def validate(self, attrs):
        try:
            policy, name = parse_gold_policy(attrs["gold_policy"])
        except ValueError as exc:
            raise serializers.ValidationError({"gold_policy": str(exc)}) from None
        attrs["gold_policy"] = policy
        given = attrs.get("gold_annotator")
        if given is not None and policy != GoldPolicy.ANNOTATOR:
            raise serializers.ValidationError({"gold_annotator": f"only with the 'annotator' gold policy, not "
                                                                 f"{policy!r}: leave it out or change the policy"})
        if name:
            annotator = get_user_model().objects.filter(username=name).first()
            if annotator is None:
                raise serializers.ValidationError({"gold_policy": f"no user named {name!r}"})
            if given is not None and given != annotator:
                raise serializers.ValidationError({"gold_annotator": f"names {given.get_username()!r}, but the gold "
                                                                     f"policy names {name!r}"})
            attrs["gold_annotator"] = annotator
        if policy == GoldPolicy.ANNOTATOR and not attrs.get("gold_annotator"):
            raise serializers.ValidationError({"gold_annotator": "required with the 'annotator' gold policy"})
        return attrs


# What `?ordering=` accepts on score lists: the stored columns, never the nested ones.
SCORE_ORDERING = ("id", "job", "trajectory", "computed_at", *SCORE_FIELDS)


class TrajectoryScoreSerializer(serializers.ModelSerializer):
    run = serializers.CharField(source="trajectory.run.name")
    task_id = serializers.CharField(source="trajectory.task.task_id")
    benchmark = serializers.CharField(source="trajectory.task.benchmark")
    decision_ids = serializers.PrimaryKeyRelatedField(source="decisions", many=True, read_only=True)
    gold_annotator = serializers.CharField(source="gold.annotator.get_username", read_only=True, default=None,
                                           allow_null=True)
    gold_version = serializers.IntegerField(source="gold.version", read_only=True, default=None, allow_null=True)
    gold_is_reference = serializers.BooleanField(source="gold.is_reference", read_only=True, default=None,
                                                 allow_null=True)
    null_reasons = serializers.SerializerMethodField(
        help_text="Why each null metric of this score could not be computed, by field name.")

    class Meta:
        model = TrajectoryScore
        fields = ("id", "job", "trajectory", "run", "benchmark", "task_id", "gold", "gold_annotator", "gold_version",
                  "gold_is_reference", *SCORE_FIELDS, "null_reasons", "error", "failed_questions",
                  "details", "decision_ids", "computed_at")

    @extend_schema_field(serializers.DictField(child=serializers.CharField()))
    def get_null_reasons(self, score) -> dict[str, str]:
        return (score.details or {}).get(NULL_REASONS, {})


class EvaluationJobSerializer(serializers.Serializer):
    """A job as the API shows it: what it evaluates, and its progress as `job_progress` reports it."""

    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EvaluationJob.Status.choices)
    runs = serializers.ListField(child=serializers.CharField(), help_text="Run names.")
    judge = serializers.CharField(help_text="Judge configuration name.")
    gold_policy = serializers.ChoiceField(choices=GoldPolicy.choices)
    gold_annotator = serializers.CharField(allow_null=True)
    tasks_without_reference = serializers.ListField(
        child=serializers.CharField(),
        help_text="Reference policy: tasks with approved gold but no reference gold, scored without gold.",
    )
    scores_off_reference = serializers.IntegerField(
        help_text="Reference policy: scores whose gold is no longer the task's reference; re-run to follow it.",
    )
    parameters = serializers.DictField()
    total = serializers.IntegerField(help_text="Units (trajectory x gold) to score.")
    done = serializers.IntegerField(help_text="Units scored, partly scored ones included.")
    partly_scored = serializers.IntegerField(
        help_text="Of those done, units some of whose judge questions failed: the metrics needing them are null.")
    failed_questions = serializers.IntegerField(help_text="Judge questions failed over the partly scored units.")
    failed = serializers.IntegerField()
    remaining = serializers.IntegerField()
    percent = serializers.FloatField()
    rate_per_second = serializers.FloatField(allow_null=True)
    eta_seconds = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    replaces = serializers.IntegerField(allow_null=True, help_text="The evaluation this one re-ran (kept as history).")
    errors = serializers.ListField(child=serializers.CharField(),
                                   help_text="Why the whole job stopped, when it failed (e.g. the judge's endpoint).")

    def to_representation(self, job):
        return super().to_representation({
            **job_progress(job),
            "replaces": job.replaces_id,
            "errors": job.errors,
            "runs": [run.name for run in job.runs.all()],
            "judge": job.judge_config.name,
            "gold_policy": job.gold_policy,
            "gold_annotator": job.gold_annotator.get_username() if job.gold_annotator else None,
            "tasks_without_reference": [] if job.gold_policy != GoldPolicy.REFERENCE else list(
                tasks_without_reference(job).values_list("task_id", flat=True)),
            "scores_off_reference": scores_off_reference(job),
            "parameters": job.parameters,
            "created_at": job.created_at,
        })
