from django.urls import path

from . import views

app_name = "annotation"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("next/", views.next_task, name="next"),
    path("tasks/<int:task_pk>/", views.task_editor, name="task"),
    path("gold/<int:pk>/", views.gold_editor, name="gold"),
    path("gold/<int:pk>/review/", views.review, name="review"),
    path("gold/<int:pk>/reference/", views.set_reference_view, name="set-reference"),
    path("quality/", views.gold_quality, name="quality"),
    path("flags/<int:pk>/dismiss/", views.dismiss_flag_view, name="dismiss-flag"),
    path("review/", views.review_queue, name="review-queue"),
    path("import/", views.import_gold_page, name="import"),
    path("export/", views.export, name="export"),
    path("schemas/gold-v1.schema.json", views.gold_schema, name="gold-schema"),
    path("agreement/", views.agreement, name="agreement"),
    path("judge-quality/", views.judge_quality, name="judge-quality"),
]
