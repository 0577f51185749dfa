from django.contrib import admin
from django.db import models

from .models import JudgeConfig, JudgeDecision, OutcomeJob, StructuredOutputMode


@admin.register(JudgeConfig)
class JudgeConfigAdmin(admin.ModelAdmin):
    list_display = ("name", "backend", "model", "base_url", "is_default")
    list_filter = ("backend",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(JudgeDecision)
class JudgeDecisionAdmin(admin.ModelAdmin):
    list_display = ("kind", "backend", "model", "score", "human_score", "cost", "latency_ms", "has_error", "created_at")
    list_filter = ("kind", "backend", "model", "prompt_version")
    search_fields = ("cache_key", "rationale")
    readonly_fields = ("cache_key", "inputs_hash", "created_at", "updated_at")
    raw_id_fields = ("reviewed_by",)

    @admin.display(boolean=True, description="error")
    def has_error(self, decision):
        return bool(decision.error)


@admin.register(OutcomeJob)
class OutcomeJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "run", "judge_config", "status", "total", "judged", "passed", "calls", "cost", "created_at")
    list_filter = ("status", "judge_config")
    raw_id_fields = ("run", "created_by")
    readonly_fields = ("created_at", "started_at", "finished_at", "dispatched_at", "heartbeat_at")


@admin.register(StructuredOutputMode)
class StructuredOutputModeAdmin(admin.ModelAdmin):
    list_display = ("base_url", "model", "mode", "found_at")
    search_fields = ("base_url", "model")
