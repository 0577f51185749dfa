"""REST endpoints comparing two runs: paired over their shared tasks per metric and site
(`metrics.selectors.comparison`), and their trajectories of one task aligned to the gold steps."""

from urllib.parse import urlencode

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from infrastructure.api import NameField, valid_query
from metrics.aggregation import METRICS
from metrics.api_leaderboard import EvaluationRefSerializer
from metrics.selectors import comparison
from trajectories.api_read import TaskRefSerializer
from trajectories.models import AgentRun, Task, TaskSubset


class PairedComparisonSerializer(serializers.Serializer):
    pairs = serializers.IntegerField(help_text="Tasks both runs have a value for.")
    baseline_mean = serializers.FloatField(allow_null=True)
    candidate_mean = serializers.FloatField(allow_null=True)
    mean_difference = serializers.FloatField(allow_null=True, help_text="Candidate minus baseline.")
    ci_low = serializers.FloatField(allow_null=True, help_text="Percentile bootstrap confidence interval.")
    ci_high = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()
    wilcoxon_p = serializers.FloatField(allow_null=True, help_text="Wilcoxon signed-rank test (zeros dropped).")
    t_test_p = serializers.FloatField(allow_null=True, help_text="Paired t-test.")
    only_in_baseline = serializers.IntegerField()
    only_in_candidate = serializers.IntegerField()
    null_pairs = serializers.IntegerField(help_text="Shared tasks where either value is null.")
    seed = serializers.IntegerField()
    resamples = serializers.IntegerField()


class SiteComparisonSerializer(PairedComparisonSerializer):
    site = serializers.CharField()


class MetricComparisonSerializer(serializers.Serializer):
    metric = serializers.CharField()
    overall = PairedComparisonSerializer()
    by_site = serializers.SerializerMethodField()

    @extend_schema_field(SiteComparisonSerializer(many=True))
    def get_by_site(self, result) -> list:
        return [{"site": site, **PairedComparisonSerializer(paired).data} for site, paired in result.by_site]


class SideSerializer(serializers.Serializer):
    run_id = serializers.IntegerField()
    name = serializers.CharField()
    evaluation = EvaluationRefSerializer()


class TaskDifferenceSerializer(serializers.Serializer):
    task = serializers.IntegerField(source="task_pk")
    task_id = serializers.CharField()
    site = serializers.CharField()
    intent = serializers.CharField()
    baseline = serializers.FloatField()
    candidate = serializers.FloatField()
    difference = serializers.FloatField()
    side_by_side = serializers.SerializerMethodField(help_text="The two trajectories aligned to the gold steps.")

    def get_side_by_side(self, difference) -> str:
        url = reverse("api-comparison-task", args=[difference.task_pk])
        query = self.context["side_by_side_query"]
        return self.context["request"].build_absolute_uri(f"{url}?{query}")


class RunComparisonSerializer(serializers.Serializer):
    baseline = SideSerializer()
    candidate = SideSerializer()
    shared_tasks = serializers.IntegerField()
    sites = serializers.ListField(child=serializers.CharField())
    metrics = MetricComparisonSerializer(many=True)
    difference_metric = serializers.CharField()
    differing_tasks = TaskDifferenceSerializer(many=True, help_text="Largest absolute difference first.")
    subset = serializers.CharField(help_text="The task subset paired over; empty: every shared task.")


class RunPairQuerySerializer(serializers.Serializer):
    baseline = NameField(slug_field="name", queryset=AgentRun.objects.all(), help_text="Run name.")
    candidate = NameField(slug_field="name", queryset=AgentRun.objects.all(),
                                             help_text="Run name.")
    judge = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="Compare the latest finished evaluations by this judge.")

    def validate(self, data):
        if data["baseline"] == data["candidate"]:
            raise ValidationError({"candidate": "choose a run other than the baseline"})
        return data


class ComparisonQuerySerializer(RunPairQuerySerializer):
    metric = serializers.ChoiceField(choices=METRICS, required=False, default="step_success",
                                     help_text="The metric the differing tasks are ranked by.")
    limit = serializers.IntegerField(min_value=1, max_value=200, required=False, default=comparison.DIFFERING_TASKS,
                                     help_text="How many differing tasks to list.")
    subset = serializers.SlugRelatedField(slug_field="name", queryset=TaskSubset.objects.all(), required=False,
                                          allow_null=True, default=None, help_text="Pair only this subset's tasks.")


def _not_evaluated(exc: comparison.NotEvaluated, data: dict) -> ValidationError:
    field = "baseline" if exc.run == data["baseline"] else "candidate"
    return ValidationError({field: f"{exc}: evaluate it first"})


@extend_schema(tags=["results"], parameters=[ComparisonQuerySerializer], responses=RunComparisonSerializer)
class ComparisonView(APIView):
    """Two runs paired over the tasks both have, per metric and per site: mean difference, bootstrap
    95% CI, Wilcoxon and paired t-test p-values; and the tasks where they differ most."""

    def get(self, request):
        data = valid_query(ComparisonQuerySerializer, request).validated_data
        try:
            result = comparison.compare_runs(data["baseline"], data["candidate"], judge=data["judge"],
                                             difference_metric=data["metric"], limit=data["limit"],
                                             subset=data["subset"])
        except comparison.NotEvaluated as exc:
            raise _not_evaluated(exc, data) from None
        pair = {key: value for key, value in RunPairQuerySerializer(data).data.items() if value}
        context = {"request": request, "side_by_side_query": urlencode(pair)}
        return Response(RunComparisonSerializer(result, context=context).data)


class StepCellSerializer(serializers.Serializer):
    """An agent step placed on the gold path (step numbers 1-based)."""

    step = serializers.IntegerField(source="mark.step")
    action = serializers.CharField()
    url = serializers.CharField()
    path_gold_step = serializers.IntegerField(source="mark.path_gold_step", allow_null=True,
                                              help_text="Gold step it matched on the recovery walk.")
    ssr_gold_step = serializers.IntegerField(source="mark.ssr_gold_step", allow_null=True,
                                             help_text="Gold step Step Success matched it with.")
    ssr_score = serializers.FloatField(source="mark.ssr_score", allow_null=True)
    left_path = serializers.IntegerField(source="mark.left_path", allow_null=True,
                                         help_text="It started a deviation: the gold step expected then.")
    came_back = serializers.IntegerField(source="mark.came_back", allow_null=True,
                                         help_text="It ended a deviation by matching this gold step.")
    recovery_cost = serializers.IntegerField(source="mark.recovery_cost", allow_null=True)
    off_path = serializers.BooleanField(source="mark.off_path")


class RowSideSerializer(serializers.Serializer):
    trajectory_id = serializers.IntegerField(allow_null=True)
    cells = StepCellSerializer(many=True)
    unmatched = serializers.BooleanField(help_text="A gold row this trajectory has no step on.")
    never_reached = serializers.BooleanField(help_text="The agent's steps ran out before this gold step.")


class SideBySideRowSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=("gold", "before", "after"),
        help_text="gold: the step on a gold step; before: steps leading to it; after: the rest.",
    )
    gold_step = serializers.IntegerField(allow_null=True)
    gold_texts = serializers.ListField(child=serializers.CharField(allow_null=True),
                                       help_text="The gold step's text, per distinct gold trajectory in use.")
    sides = RowSideSerializer(many=True)


class TrajectorySideSerializer(serializers.Serializer):
    run_id = serializers.IntegerField(source="side.run_id")
    name = serializers.CharField(source="side.name")
    evaluation = EvaluationRefSerializer(source="side.evaluation")
    trajectory_id = serializers.IntegerField(source="trajectory.pk", default=None, allow_null=True)
    score_id = serializers.IntegerField(source="score.pk", default=None, allow_null=True)
    gold_id = serializers.IntegerField(source="score.gold_id", default=None, allow_null=True)
    aligned = serializers.BooleanField(source="alignment.aligned", help_text="False: scored without gold.")


class SideBySideSerializer(serializers.Serializer):
    task = TaskRefSerializer()
    same_gold = serializers.BooleanField(help_text="Both trajectories were scored against the same gold.")
    gold_hidden = serializers.BooleanField(help_text="A gold in use is not yours to read yet (blind review): "
                                                     "its texts are null.")
    sides = TrajectorySideSerializer(many=True)
    rows = SideBySideRowSerializer(many=True)


@extend_schema(tags=["results"], parameters=[RunPairQuerySerializer], responses=SideBySideSerializer)
class ComparisonTaskView(APIView):
    """The two runs' trajectories of one task aligned to the gold steps: which gold step each agent
    step matched, where each left the gold path and where it came back."""

    def get(self, request, task: int):
        task_row = get_object_or_404(Task, pk=task)
        data = valid_query(RunPairQuerySerializer, request).validated_data
        try:
            view = comparison.side_by_side(task_row, [data["baseline"], data["candidate"]], viewer=request.user,
                                           judge=data["judge"])
        except comparison.NotEvaluated as exc:
            raise _not_evaluated(exc, data) from None
        return Response(SideBySideSerializer(view).data)
