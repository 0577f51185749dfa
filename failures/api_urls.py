from django.urls import path

from . import api

urlpatterns = [
    path("trajectories/<int:pk>/failure-annotations/", api.TrajectoryFailureAnnotationsView.as_view(),
         name="api-failure-annotations"),
    path("failures/attribution/", api.AttributionView.as_view(), name="api-failure-attribution"),
    path("runs/<int:pk>/failure-attribution/", api.RunAttributionView.as_view(), name="api-run-attribution"),
    path("failure-attribution-jobs/<int:pk>/", api.AttributionJobDetail.as_view(), name="api-attribution-job"),
    path("search/steps/", api.StepSearchView.as_view(), name="api-step-search"),
]
