from django.contrib import admin, messages

from .errors import GoldError
from .models import (
    Assignment, GoldCheckJob, GoldFlag, GoldReview, GoldStatus, GoldStep, GoldTrajectory, SentenceVector,
)
from .services.reference import assign_missing_references, set_reference


class GoldStepInline(admin.TabularInline):
    model = GoldStep
    fields = ("index", "text", "action_type", "element_role", "element_name", "value")
    extra = 0


class GoldReviewInline(admin.TabularInline):
    model = GoldReview
    fields = ("reviewer", "decision", "comment", "gold_version", "created_at")
    readonly_fields = ("created_at",)
    extra = 0


@admin.register(GoldTrajectory)
class GoldTrajectoryAdmin(admin.ModelAdmin):
    list_display = ("task", "annotator", "status", "is_reference", "version", "cannot_complete", "source", "updated_at")
    list_filter = ("status", "is_reference", "cannot_complete", "annotator")
    search_fields = ("task__task_id", "task__intent", "annotator__username")
    raw_id_fields = ("task", "annotator")
    readonly_fields = ("is_reference",)
    inlines = [GoldStepInline, GoldReviewInline]
    actions = ["make_reference"]

    def save_model(self, request, obj, form, change):
        """Only approved gold is a reference; the first approved gold of a task becomes it."""
        if obj.status != GoldStatus.APPROVED:
            obj.is_reference = False
        super().save_model(request, obj, form, change)
        assign_missing_references([obj.task_id])

    @admin.action(description="Make the reference gold of its task")
    def make_reference(self, request, queryset):
        for gold in queryset.select_related("task"):
            try:
                set_reference(gold.pk, user=request.user)
            except GoldError as exc:
                self.message_user(request, f"Gold #{gold.pk}: {exc}", messages.ERROR)
            else:
                self.message_user(request, f"Gold #{gold.pk} is now the reference of task {gold.task.task_id}.")


@admin.register(GoldFlag)
class GoldFlagAdmin(admin.ModelAdmin):
    list_display = ("gold", "kind", "confidence", "message", "active", "dismissed_at", "dismissed_by")
    list_filter = ("kind", "active")
    search_fields = ("message", "gold__task__task_id", "dismiss_reason")
    raw_id_fields = ("gold", "related_gold", "related_task", "dismissed_by")


@admin.register(GoldCheckJob)
class GoldCheckJobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "benchmark", "status", "done", "total", "created_at", "finished_at")
    list_filter = ("kind", "status")
    raw_id_fields = ("created_by",)


@admin.register(SentenceVector)
class SentenceVectorAdmin(admin.ModelAdmin):
    """Stored vectors are a cache of the model's output: listed, deletable, never edited."""

    list_display = ("digest", "created_at")
    readonly_fields = ("digest", "vector", "created_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("task", "annotator", "assigned_by", "created_at")
    raw_id_fields = ("task", "annotator", "assigned_by")


@admin.register(GoldStep)
class GoldStepAdmin(admin.ModelAdmin):
    list_display = ("gold", "index", "text", "action_type")
    list_filter = ("action_type",)
    search_fields = ("text", "element_name")
    raw_id_fields = ("gold",)


@admin.register(GoldReview)
class GoldReviewAdmin(admin.ModelAdmin):
    list_display = ("gold", "reviewer", "decision", "gold_version", "created_at")
    list_filter = ("decision",)
    raw_id_fields = ("gold", "reviewer")
