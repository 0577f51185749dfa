from django.contrib import admin

from .models import AttributionJob, AttributionSource, FailureAttribution, FailureTaxonomy


@admin.register(AttributionSource)
class AttributionSourceAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "model")


@admin.register(FailureTaxonomy)
class FailureTaxonomyAdmin(admin.ModelAdmin):
    list_display = ("benchmark", "updated_at")


@admin.register(FailureAttribution)
class FailureAttributionAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "source", "annotator_name", "step_index", "agent", "failure_type")
    list_filter = ("source",)
    raw_id_fields = ("trajectory", "annotator")


@admin.register(AttributionJob)
class AttributionJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "run", "method", "judge_config", "status", "attributed", "total", "calls", "cost",
                    "created_at")
    list_filter = ("status", "method")
    raw_id_fields = ("run", "created_by")
