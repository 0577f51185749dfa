from django.urls import path

from . import report_views, verdict_views, views

app_name = "metrics"

urlpatterns = [
    path("evaluations/", views.job_list, name="jobs"),
    path("evaluations/<int:pk>/", views.job_detail, name="job"),
    path("evaluations/<int:pk>/cancel/", views.change, {"action": "cancel"}, name="cancel"),
    path("evaluations/<int:pk>/rerun/", views.change, {"action": "rerun"}, name="rerun"),
    path("runs/<int:run_pk>/evaluate/", views.start, name="start"),
    path("runs/<int:run_pk>/agreement/", verdict_views.agreement, name="verdict-agreement"),
    path("runs/<int:run_pk>/grades/import/", verdict_views.upload_grades, name="import-grades"),
    path("leaderboard/", report_views.leaderboard_page, name="leaderboard"),
    path("compare/", report_views.compare_page, name="compare"),
    path("compare/<int:baseline>/<int:candidate>/tasks/<int:task>/", report_views.compare_task, name="compare-task"),
    path("plots/<str:name>.<str:fmt>", report_views.plot, name="plot"),
    path("exports/<str:what>.<str:fmt>", report_views.export, name="export"),
]
