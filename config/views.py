from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from infrastructure import health, readme
from trajectories.formats.canonical import SCHEMA_PATH

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


@login_required
@require_GET
def docs_index(request):
    """Every README section and document under docs/, as a contents list."""
    return render(request, "docs_index.html", {"sections": readme.sections().values()})


@login_required
@require_GET
def readme_section(request, slug: str):
    """One README section (the metric definitions, the gold import rules...), for pages that cite it."""
    found = readme.section_html(slug)
    if found is None:
        raise Http404(f"the README has no section {slug!r}")
    title, html = found
    return render(request, "readme_section.html", {"title": title, "html": html, "slug": slug})
