from django.contrib import admin

from .models import AttributionSource, FailureAttribution, FailureTaxonomy


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
