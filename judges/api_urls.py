from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter(use_regex_path=False)
router.register("judge-configs", api.JudgeConfigViewSet, basename="api-judge-config")

urlpatterns = router.urls
