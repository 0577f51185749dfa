"""The REST API root; each app keeps its routes in its own `api_urls.py`."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accounts.api import ObtainToken

from .api import not_found

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("token/", ObtainToken.as_view(), name="api-token"),
    path("", include("trajectories.api_urls")),
    path("", include("annotation.api_urls")),
    path("", include("judges.api_urls")),
    path("", include("metrics.api_urls")),
    re_path(r"^.*$", not_found),  # last: unknown API paths answer JSON too
]
