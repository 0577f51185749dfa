"""JSON shapes of gold trajectories, shared by the REST API and the editor page."""

from rest_framework import serializers

from .content import GoldContent
from .formats import GoldStepRecord
from .models import GoldReview, GoldStep, GoldTrajectory
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
    steps = GoldStepSerializer(many=True, read_only=True)
    reviews = GoldReviewSerializer(many=True, read_only=True)

    class Meta:
        model = GoldTrajectory
        fields = (
            "id", "task", "annotator", "status", "version", "cannot_complete", "cannot_complete_reason",
            "final_answer", "source", "submitted_at", "created_at", "updated_at", "steps", "reviews",
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
