from django.contrib import admin

from .models import (
    AgentRun,
    ImportChunk,
    ImportJob,
    OutcomeGrade,
    RunTally,
    RunVerdictCount,
    Screenshot,
    Step,
    SubsetTally,
    SubsetVerdictCount,
    Task,
    TaskResult,
    TaskSubset,
    Trajectory,
    Verdict,
    VerdictSource,
)


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("task_id", "benchmark", "intent", "site_list", "unachievable", "requirements_source")
    list_filter = ("benchmark", "from_task_list", "unachievable", "requirements_source", "require_login")
    search_fields = ("task_id", "intent", "old_task_id")
    readonly_fields = ("created_at", "updated_at")

    @admin.display(description="sites")
    def site_list(self, task):
        return ", ".join(task.sites)


@admin.register(TaskSubset)
class TaskSubsetAdmin(admin.ModelAdmin):
    list_display = ("name", "benchmark", "size", "source", "updated_at")
    search_fields = ("name", "description")
    readonly_fields = ("created_at", "updated_at")

    @admin.display(description="tasks")
    def size(self, subset):
        return len(subset.task_ids)


@admin.register(AgentRun)
class AgentRunAdmin(admin.ModelAdmin):
    list_display = ("name", "agent", "model", "paradigm", "benchmark", "uploaded_by", "created_at")
    list_filter = ("paradigm", "benchmark")
    search_fields = ("name", "agent", "model")
    raw_id_fields = ("uploaded_by",)


class StepInline(admin.TabularInline):
    model = Step
    fields = ("index", "url", "action", "planned_action", "action_type", "element_id")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Trajectory)
class TrajectoryAdmin(admin.ModelAdmin):
    list_display = ("task", "run", "step_count", "outcome_status", "outcome_reason", "success", "final_answer")
    list_filter = ("outcome_status", "outcome_reason", "success", "run")
    search_fields = ("task__task_id", "run__name", "final_answer")
    raw_id_fields = ("run", "task")
    inlines = [StepInline]


@admin.register(Step)
class StepAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "index", "action_type", "action")
    list_filter = ("action_type",)
    raw_id_fields = ("trajectory", "screenshot")
    search_fields = ("action", "planned_action")


@admin.register(Screenshot)
class ScreenshotAdmin(admin.ModelAdmin):
    list_display = ("sha256", "content_type", "size", "created_at")


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("id", "run", "status", "processed", "total", "created_by", "created_at")
    list_filter = ("status",)
    raw_id_fields = ("run", "created_by")


@admin.register(ImportChunk)
class ImportChunkAdmin(admin.ModelAdmin):
    list_display = ("job", "number", "status", "attempts", "finished_at")
    list_filter = ("status",)
    raw_id_fields = ("job",)


@admin.register(TaskResult)
class TaskResultAdmin(admin.ModelAdmin):
    list_display = ("run", "task", "success", "source_name", "origin", "updated_at")
    list_filter = ("origin", "success")
    search_fields = ("run__name", "task__task_id", "source_name")
    raw_id_fields = ("run", "task")


@admin.register(OutcomeGrade)
class OutcomeGradeAdmin(admin.ModelAdmin):
    list_display = ("run", "task", "grader_name", "value", "origin", "updated_at")
    list_filter = ("origin", "value")
    search_fields = ("run__name", "task__task_id", "grader_name", "note")
    raw_id_fields = ("run", "task", "trajectory", "grader")


@admin.register(VerdictSource)
class VerdictSourceAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "model", "threshold", "created_at")
    list_filter = ("kind",)
    search_fields = ("name", "model")


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ("run", "task", "source", "success", "label", "score", "source_name")
    list_filter = ("source__kind", "success")
    search_fields = ("run__name", "task__task_id", "source__name", "explanation")
    raw_id_fields = ("run", "task", "trajectory", "source")


class CountsAdmin(admin.ModelAdmin):
    """Counts kept by the services for the leaderboard: read here, recounted by them, never edited."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(RunTally)
class RunTallyAdmin(CountsAdmin):
    list_display = ("run", "trajectories", "with_steps", "updated_at")
    search_fields = ("run__name",)


@admin.register(RunVerdictCount)
class RunVerdictCountAdmin(CountsAdmin):
    list_display = ("run", "source", "site", "passed", "total")
    list_filter = ("source",)
    search_fields = ("run__name",)


@admin.register(SubsetTally)
class SubsetTallyAdmin(CountsAdmin):
    list_display = ("subset", "run", "trajectories")
    list_filter = ("subset",)
    search_fields = ("run__name",)


@admin.register(SubsetVerdictCount)
class SubsetVerdictCountAdmin(CountsAdmin):
    list_display = ("subset", "run", "source", "site", "passed", "total")
    list_filter = ("subset", "source")
    search_fields = ("run__name",)
