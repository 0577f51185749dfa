from django.urls import path

from . import api

urlpatterns = [
    path("trajectories/<int:pk>/failure-annotations/", api.TrajectoryFailureAnnotationsView.as_view(),
         name="api-failure-annotations"),
    path("failures/attribution/", api.AttributionView.as_view(), name="api-failure-attribution"),
    path("search/steps/", api.StepSearchView.as_view(), name="api-step-search"),
]
