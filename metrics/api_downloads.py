"""How the API hands back files: renderers that let clients ask for a file type, the response that carries
(or streams) the bytes, errors kept in JSON, and the schema of a table download."""

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import renderers
from rest_framework.response import Response
from rest_framework.views import APIView

from metrics import exports


class _DownloadRenderer(renderers.BaseRenderer):
    """Lets clients ask for a file type in `Accept`; the views hand back the file's bytes themselves."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


class CSVRenderer(_DownloadRenderer):
    media_type, format = "text/csv", "csv"


class XLSXRenderer(_DownloadRenderer):
    media_type, format = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"


def download(content, content_type: str, filename: str) -> HttpResponse:
    """`content`: bytes, or chunks of them, streamed."""
    response = (HttpResponse(content, content_type=content_type) if isinstance(content, bytes)
                else StreamingHttpResponse(content, content_type=content_type))
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def table_responses(description: str) -> dict:
    return {
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description=f"{description} (CSV, a header row)."),
        (200, "application/json"): OpenApiResponse(
            {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
            description=f"{description} (JSON records, the same columns).",
        ),
    }


FORMAT_PARAMETER = OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(exports.FORMATS),
                                    description="File format.")


class DownloadView(APIView):
    renderer_classes = [renderers.JSONRenderer, CSVRenderer, XLSXRenderer]

    def finalize_response(self, request, response, *args, **kwargs):
        """Errors are JSON whatever file type was asked for."""
        response = super().finalize_response(request, response, *args, **kwargs)
        if isinstance(response, Response):
            response.accepted_renderer = renderers.JSONRenderer()
            response.accepted_media_type = "application/json"
        return response
