from django.contrib import admin

from .models import Assignment, GoldReview, GoldStep, GoldTrajectory


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
    list_display = ("task", "annotator", "status", "version", "cannot_complete", "source", "updated_at")
    list_filter = ("status", "cannot_complete", "annotator")
    search_fields = ("task__task_id", "task__intent", "annotator__username")
    raw_id_fields = ("task", "annotator")
    inlines = [GoldStepInline, GoldReviewInline]


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
