"""JSON shapes of gold trajectories, shared by the REST API and the editor page."""

from rest_framework import serializers

from .content import GoldContent
from .gold_records import GoldStepRecord
from .models import GoldCheckJob, GoldFlag, GoldReview, GoldStatus, GoldStep, GoldTrajectory
from .sentences import ACTION_TYPES


class GoldStepSerializer(serializers.ModelSerializer):
    label = serializers.CharField(source="source_label", read_only=True)

    class Meta:
        model = GoldStep
        fields = ("index", "text", "label", "action_type", "element_role", "element_name", "value")
        read_only_fields = fields


class GoldReviewSerializer(serializers.ModelSerializer):
    reviewer = serializers.CharField(source="reviewer.get_username", read_only=True)

    class Meta:
        model = GoldReview
        fields = ("reviewer", "decision", "comment", "gold_version", "created_at")
        read_only_fields = fields


class GoldTrajectorySerializer(serializers.ModelSerializer):
    task = serializers.SerializerMethodField()
    annotator = serializers.CharField(source="annotator.get_username", read_only=True)
    imported_by = serializers.CharField(source="imported_by.get_username", default=None, read_only=True,
                                        allow_null=True, help_text="The reviewer who imported it (`source` is the "
                                        "file), on behalf of `annotator` when not the same; null: the operator's "
                                        "command, or recorded on the web.")
    steps = GoldStepSerializer(many=True, read_only=True)
    reviews = GoldReviewSerializer(many=True, read_only=True)

    class Meta:
        model = GoldTrajectory
        fields = (
            "id", "task", "annotator", "status", "version", "cannot_complete", "cannot_complete_reason",
            "final_answer", "source", "is_reference", "imported_by", "imported_at", "submitted_at", "created_at",
            "updated_at", "steps", "reviews",
        )
        read_only_fields = fields

    def get_task(self, gold) -> dict:
        return {"id": gold.task_id, "benchmark": gold.task.benchmark, "task_id": gold.task.task_id}


class StepInputSerializer(serializers.Serializer):
    text = serializers.CharField(required=False, allow_blank=True, default="", trim_whitespace=False)
    label = serializers.CharField(required=False, allow_blank=True, default="")
    action_type = serializers.ChoiceField(choices=("",) + ACTION_TYPES, required=False, default="")
    element_role = serializers.CharField(required=False, allow_blank=True, default="")
    element_name = serializers.CharField(required=False, allow_blank=True, default="")
    value = serializers.CharField(required=False, allow_blank=True, default="", trim_whitespace=False)


class VersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=0)


class GoldInputSerializer(serializers.Serializer):
    """A whole gold trajectory as written by a client; fields left out keep their stored value on PATCH."""

    version = serializers.IntegerField(min_value=0, required=False)
    benchmark = serializers.CharField(required=False, default="webarena")
    task_id = serializers.CharField(required=False)
    steps = StepInputSerializer(many=True, required=False)
    cannot_complete = serializers.BooleanField(required=False)
    cannot_complete_reason = serializers.CharField(required=False, allow_blank=True)
    final_answer = serializers.CharField(required=False, allow_blank=True)
    submit = serializers.BooleanField(required=False, default=False)

    def content(self, base: GoldContent | None = None) -> GoldContent:
        """The content to store: the given fields over `base` (the stored content, for PATCH)."""
        data = self.validated_data
        base = base or GoldContent()
        return GoldContent(
            steps=[GoldStepRecord(**step) for step in data["steps"]] if "steps" in data else base.steps,
            cannot_complete=data.get("cannot_complete", base.cannot_complete),
            cannot_complete_reason=data.get("cannot_complete_reason", base.cannot_complete_reason),
            final_answer=data.get("final_answer", base.final_answer),
        )


class ReviewInputSerializer(VersionSerializer):
    decision = serializers.ChoiceField(choices=GoldReview.VERDICTS)
    comment = serializers.CharField(required=False, allow_blank=True, default="")


class RequirementsInputSerializer(serializers.Serializer):
    requirements = serializers.ListField(child=serializers.CharField(allow_blank=True, trim_whitespace=False))
    expected = serializers.ListField(child=serializers.CharField(allow_blank=True, trim_whitespace=False),
                                     required=False)


class GoldCheckJobSerializer(serializers.ModelSerializer):
    kind = serializers.CharField(read_only=True, help_text="quality | agreement")
    status = serializers.CharField(read_only=True, help_text="pending | running | done | failed")

    class Meta:
        model = GoldCheckJob
        fields = ("id", "kind", "benchmark", "parameters", "status", "total", "done", "result", "error", "created_at",
                  "started_at", "finished_at")
        read_only_fields = fields


class GoldFlagSerializer(serializers.ModelSerializer):
    kind = serializers.CharField(read_only=True, help_text=", ".join(GoldFlag.Kind.values))
    task_id = serializers.CharField(source="gold.task.task_id", read_only=True)
    benchmark = serializers.CharField(source="gold.task.benchmark", read_only=True)
    dismissed_by = serializers.CharField(source="dismissed_by.get_username", read_only=True, default=None,
                                         allow_null=True)

    class Meta:
        model = GoldFlag
        fields = ("id", "gold", "benchmark", "task_id", "kind", "key", "message", "confidence", "rows",
                  "related_gold", "related_task", "active", "dismissed_at", "dismissed_by", "dismiss_reason",
                  "created_at", "updated_at")
        read_only_fields = fields


class GoldImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="xlsx, CSV, gold/v1 JSON, or Mind2Web action sequences (JSON)")
    annotator = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="Default: your own name")
    status = serializers.CharField(default=GoldStatus.SUBMITTED,
                                   help_text=f"One of {', '.join(GoldStatus.values)}; only admins import approved gold")
    benchmark = serializers.CharField(default="webarena")
    strict = serializers.BooleanField(default=False, help_text="Refuse a file whose step numbering needs resolving")
    reference = serializers.BooleanField(default=False, help_text="Make the file's gold the reference of its tasks")


class DismissSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="Why the flag is not a problem")
