from django.http import FileResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from trajectories.formats.canonical import SCHEMA_PATH

from . import health
from .home import guide, platform_counts


@require_GET
def home(request):
    return render(request, "home.html", {"counts": platform_counts(), "guide": guide()})


@never_cache
@require_GET
def healthz(request):
    report = health.check()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)


@require_GET
def trajectory_schema(request):
    return FileResponse(SCHEMA_PATH.open("rb"), content_type="application/schema+json")
