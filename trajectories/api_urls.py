from django.urls import path
from rest_framework.routers import SimpleRouter

from . import api, api_read

router = SimpleRouter(use_regex_path=False)
router.register("tasks", api_read.TaskViewSet, basename="api-task")
router.register("runs", api_read.RunViewSet, basename="api-run")
router.register("trajectories", api_read.TrajectoryViewSet, basename="api-trajectory")

urlpatterns = [
    path("runs/import/", api.RunImport.as_view(), name="api-run-import"),
    path("tasks/import/", api.TaskImport.as_view(), name="api-task-import"),
    path("subsets/", api.SubsetList.as_view(), name="api-subsets"),
    path("import-jobs/<int:pk>/", api.ImportJobDetail.as_view(), name="api-import-job"),
    *router.urls,
]
