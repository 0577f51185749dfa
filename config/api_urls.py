"""The REST API root; each app keeps its routes in its own `api_urls.py`."""

import threading

from django.http import HttpResponse
from django.urls import include, path, re_path
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SCHEMA_KWARGS, SpectacularAPIView, SpectacularSwaggerSplitView

from accounts.api import ObtainToken
from infrastructure.api import not_found


class SchemaView(SpectacularAPIView):
    """The OpenAPI document, generated once per process and format, then served as stored: generating
    it holds a worker for about a second. One thread generates at a time: DRF binds each view class's
    schema inspector to the view being inspected, so two generations at once would read each other's
    views and fail."""

    _generating = threading.Lock()
    _documents: dict[tuple[str, str], tuple[bytes, str, str]] = {}

    @extend_schema(**SCHEMA_KWARGS)
    def get(self, request, *args, **kwargs):
        renderer, _ = self.perform_content_negotiation(request, force=True)
        key = (renderer.format, request.GET.get("lang", ""))
        with self._generating:
            if key not in self._documents:
                response = self.finalize_response(request, super().get(request, *args, **kwargs))
                response.render()
                self._documents[key] = (response.content, response["Content-Type"], response["Content-Disposition"])
        content, content_type, disposition = self._documents[key]
        return HttpResponse(content, content_type=content_type, headers={"Content-Disposition": disposition})


urlpatterns = [
    path("schema/", SchemaView.as_view(), name="api-schema"),
    # The page's script is a separate request (?script), so the page needs no inline script under the CSP.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("token/", ObtainToken.as_view(), name="api-token"),
    path("", include("trajectories.api_urls")),
    path("", include("annotation.api_urls")),
    path("", include("judges.api_urls")),
    path("", include("failures.api_urls")),
    path("", include("metrics.api_urls")),
    re_path(r"^.*$", not_found),  # last: unknown API paths answer JSON too
]
