from django.contrib import admin

from .models import Aggregate, EvaluationJob, PlotJob, TrajectoryScore


@admin.register(EvaluationJob)
class EvaluationJobAdmin(admin.ModelAdmin):
    list_display = ("id", "status", "judge_config", "gold_policy", "done", "failed", "total", "created_at")
    list_filter = ("status", "gold_policy")
    filter_horizontal = ("runs",)
    raw_id_fields = ("gold_annotator", "created_by")


@admin.register(PlotJob)
class PlotJobAdmin(admin.ModelAdmin):
    list_display = ("id", "status", "key", "created_at", "finished_at")
    list_filter = ("status",)
    readonly_fields = ("key", "request", "error")


@admin.register(TrajectoryScore)
class TrajectoryScoreAdmin(admin.ModelAdmin):
    list_display = (
        "trajectory", "job", "step_success", "recovery", "repetitiveness", "element_accuracy",
        "partial_success", "correct", "success", "outcome_status",
    )
    list_filter = ("job", "outcome_status", "success")
    raw_id_fields = ("job", "trajectory", "gold", "decisions")


@admin.register(Aggregate)
class AggregateAdmin(admin.ModelAdmin):
    list_display = ("job", "run", "scope", "group", "metric", "mean", "std", "count", "null_count")
    list_filter = ("scope", "metric")
