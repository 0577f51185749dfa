from django.contrib.auth import get_user_model
from rest_framework import serializers

from config.api import NameField
from judges.selectors import UnknownJudge, judge_config_required
from metrics.models import EvaluationJob, GoldPolicy, TrajectoryScore
from metrics.selectors import job_progress
from metrics.services.scoring import SCORE_FIELDS
from trajectories.models import AgentRun


class EvaluationRequestSerializer(serializers.Serializer):
    runs = NameField(slug_field="name", queryset=AgentRun.objects.all(), many=True,
                                        allow_empty=False)
    judge = serializers.CharField(required=False, allow_blank=True,
                                  help_text="A judge configuration's name, or a backend: exact, offline, openai")
    gold_policy = serializers.ChoiceField(choices=GoldPolicy.choices, default=GoldPolicy.APPROVED)
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
        if attrs["gold_policy"] == GoldPolicy.ANNOTATOR and not attrs.get("gold_annotator"):
            raise serializers.ValidationError({"gold_annotator": "required with the 'annotator' gold policy"})
        return attrs


# What `?ordering=` accepts on score lists: the stored columns, never the nested ones.
SCORE_ORDERING = ("id", "job", "trajectory", "computed_at", *SCORE_FIELDS)


class TrajectoryScoreSerializer(serializers.ModelSerializer):
    run = serializers.CharField(source="trajectory.run.name")
    task_id = serializers.CharField(source="trajectory.task.task_id")
    benchmark = serializers.CharField(source="trajectory.task.benchmark")
    decision_ids = serializers.PrimaryKeyRelatedField(source="decisions", many=True, read_only=True)

    class Meta:
        model = TrajectoryScore
        fields = ("id", "job", "trajectory", "run", "benchmark", "task_id", "gold", *SCORE_FIELDS, "error",
                  "details", "decision_ids", "computed_at")


class EvaluationJobSerializer(serializers.Serializer):
    """A job as the API shows it: what it evaluates, and its progress as `job_progress` reports it."""

    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EvaluationJob.Status.choices)
    runs = serializers.ListField(child=serializers.CharField(), help_text="Run names.")
    judge = serializers.CharField(help_text="Judge configuration name.")
    gold_policy = serializers.ChoiceField(choices=GoldPolicy.choices)
    gold_annotator = serializers.CharField(allow_null=True)
    parameters = serializers.DictField()
    total = serializers.IntegerField(help_text="Units (trajectory x gold) to score.")
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    remaining = serializers.IntegerField()
    percent = serializers.FloatField()
    rate_per_second = serializers.FloatField(allow_null=True)
    eta_seconds = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, job):
        return super().to_representation({
            **job_progress(job),
            "runs": [run.name for run in job.runs.all()],
            "judge": job.judge_config.name,
            "gold_policy": job.gold_policy,
            "gold_annotator": job.gold_annotator.get_username() if job.gold_annotator else None,
            "parameters": job.parameters,
            "created_at": job.created_at,
        })
