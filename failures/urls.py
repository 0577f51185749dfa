from django.urls import path

from . import views

app_name = "failures"

urlpatterns = [
    path("trajectories/<int:pk>/annotate/", views.annotate, name="annotate"),
    path("queue/", views.queue, name="queue"),
    path("agreement/", views.agreement, name="agreement"),
    path("types/<str:benchmark>/", views.taxonomy, name="taxonomy"),
    path("attribution/", views.attribution, name="attribution"),
    path("themes/", views.themes, name="themes"),
    path("search/", views.search, name="search"),
    path("runs/<int:pk>/rules/", views.run_rules, name="run-rules"),
    path("runs/<int:pk>/llm/", views.run_llm, name="run-llm"),
]
