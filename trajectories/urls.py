from django.urls import path

from . import views

app_name = "trajectories"

urlpatterns = [
    path("runs/import/", views.upload, name="upload"),
    path("runs/import-outcomes/", views.upload_outcomes, name="upload-outcomes"),
    path("runs/import-verdicts/", views.upload_verdicts, name="upload-verdicts"),
    path("tasks/", views.task_list, name="task-list"),
    path("tasks/import/", views.task_import, name="task-import"),
    path("tasks/<int:pk>/", views.task_detail, name="task-detail"),
    path("trajectories/<int:pk>/grade/", views.grade_trajectory, name="grade"),
    path("trajectories/<int:pk>/steps/<int:index>/<str:field>.txt", views.step_text, name="step-text"),
    path("screenshots/<str:sha256>", views.screenshot, name="screenshot"),
    path("imports/<int:pk>/", views.import_job, name="import-job"),
    path("imports/<int:pk>/progress", views.import_job_progress, name="import-job-progress"),
    path("imports/<int:pk>/retry/", views.import_job_retry, name="import-job-retry"),
]
