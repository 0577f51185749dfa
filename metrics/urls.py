from django.urls import path

from . import audit_views, outcome_views, report_views, run_views, verdict_views, views

app_name = "metrics"

urlpatterns = [
    path("runs/", run_views.run_list, name="run-list"),
    path("runs/<int:pk>/", run_views.run_detail, name="run-detail"),
    path("runs/<int:pk>/rename/", run_views.run_rename, name="run-rename"),
    path("runs/<int:pk>/delete/", run_views.run_delete, name="run-delete"),
    path("trajectories/<int:pk>/", run_views.trajectory_detail, name="trajectory-detail"),
    path("runs/<int:pk>/failures-from-gold/", run_views.run_failures_from_gold, name="run-failures-from-gold"),
    path("evaluations/", views.job_list, name="jobs"),
    path("evaluations/<int:pk>/", views.job_detail, name="job"),
    path("evaluations/<int:pk>/cancel/", views.change, {"action": "cancel"}, name="cancel"),
    path("evaluations/<int:pk>/rerun/", views.change, {"action": "rerun"}, name="rerun"),
    path("runs/<int:run_pk>/evaluate/", views.start, name="start"),
    path("runs/<int:run_pk>/judge-outcomes/", outcome_views.judge_outcomes, name="judge-outcomes"),
    path("outcome-jobs/<int:pk>/", outcome_views.outcome_job, name="outcome-job"),
    path("outcome-jobs/<int:pk>/retry/", outcome_views.outcome_job_retry, name="outcome-job-retry"),
    path("runs/<int:run_pk>/agreement/", verdict_views.agreement, name="verdict-agreement"),
    path("verdicts/judges/", verdict_views.judges_vs_humans, name="judges-vs-humans"),
    path("verdicts/judges.<str:fmt>", verdict_views.judges_vs_humans_export, name="judges-vs-humans-export"),
    path("runs/<int:run_pk>/grades/import/", verdict_views.upload_grades, name="import-grades"),
    # The judge audit keeps its address among the reviewers' pages.
    path("annotation/judge-audit/", audit_views.judge_audit, name="judge-audit"),
    path("annotation/judge-audit/verdict/", audit_views.judge_audit_verdict, name="judge-audit-verdict"),
    path("leaderboard/", report_views.leaderboard_page, name="leaderboard"),
    path("compare/", report_views.compare_page, name="compare"),
    path("compare/<int:baseline>/<int:candidate>/tasks/<int:task>/", report_views.compare_task, name="compare-task"),
    path("plots/<str:name>.<str:fmt>", report_views.plot, name="plot"),
    path("exports/<str:what>.<str:fmt>", report_views.export, name="export"),
]
