"""The OpenAPI schema validates, covers every endpoint, and its docs page works offline."""

import re
from urllib.parse import urlparse

import pytest
import yaml
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.urls import get_resolver
from playwright.sync_api import expect

from tests.api.conftest import client_for

MAIN_PATHS = {
    "/api/tasks/", "/api/tasks/{id}/", "/api/runs/", "/api/runs/{id}/", "/api/runs/import/",
    "/api/trajectories/", "/api/trajectories/{id}/", "/api/gold/", "/api/gold/{id}/", "/api/gold/{id}/review/",
    "/api/judge-configs/", "/api/judge-configs/{id}/", "/api/judge-decisions/{id}/verdict/",
    "/api/evaluations/", "/api/evaluations/{id}/", "/api/evaluations/{id}/cancel/", "/api/evaluations/{id}/scores/",
    "/api/scores/", "/api/aggregates/", "/api/leaderboard/", "/api/comparisons/", "/api/exports/scores.{fmt}",
    "/api/exports/gold.{fmt}", "/api/token/",
}


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    """Generated with drf-spectacular's own validation, failing on any warning."""
    path = tmp_path_factory.mktemp("schema") / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


def test_schema_validates_and_covers_the_main_endpoints(schema):
    assert schema["openapi"].startswith("3.") and schema["info"]["title"] == "Trajscope API"
    assert MAIN_PATHS <= set(schema["paths"])
    assert "tokenAuth" in schema["components"]["securitySchemes"]


def test_every_api_route_is_in_the_schema(schema):
    """A DRF route added without reaching the schema would be missing from the docs."""
    documented = {re.sub(r"\{[^}]+\}", "{}", path) for path in schema["paths"]}
    api = next(p for p in get_resolver().url_patterns if str(p.pattern) == "api/")
    undocumented = [
        route for route, view in _leaves(api.url_patterns, "/api/")
        if hasattr(view, "cls") and route not in ("/api/schema/", "/api/docs/") and route not in documented
    ]
    assert not undocumented


def _leaves(patterns, prefix):
    for pattern in patterns:
        route = prefix + _route(pattern)
        if hasattr(pattern, "url_patterns"):
            yield from _leaves(pattern.url_patterns, route)
        else:
            yield route, pattern.callback


def _route(pattern) -> str:
    text = str(pattern.pattern).lstrip("^").rstrip("$").replace("\\.", ".")
    text = re.sub(r"\(\?P<[^>]+>[^)]*\)", "{}", text)  # regex groups (formats, router lookups)
    text = re.sub(r"<[^>]+>", "{}", text)
    return text.replace("[/]", "/")


def test_errors_are_documented_with_the_shared_body(schema):
    operation = schema["paths"]["/api/trajectories/{id}/"]["get"]["responses"]
    assert {"200", "401", "403", "404"} <= set(operation)
    assert operation["404"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    conflict = schema["paths"]["/api/gold/{id}/"]["put"]["responses"]["409"]
    assert conflict["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Conflict"}


@pytest.mark.django_db
def test_docs_page_uses_only_local_assets():
    client = client_for(None)
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets and all(not urlparse(asset).netloc for asset in assets), assets
    for asset in assets:
        if asset.startswith("/static/"):
            assert finders.find(asset.removeprefix("/static/")), asset
    # The page's own script is a separate file, as the Content-Security-Policy wants.
    assert "<script>" not in html and "<style>" not in html
    [script] = [asset for asset in assets if asset.startswith("/api/docs/?script")]
    assert "/api/schema/" in client.get(script.replace("&amp;", "&")).content.decode()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_swagger_ui_renders_the_schema_without_internet(page, live_server):
    outside = []

    def only_local(route):
        if urlparse(route.request.url).hostname in ("localhost", "127.0.0.1"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Trajscope API", timeout=20_000)
    expect(page.locator("#operations-results-leaderboard_list")).to_be_visible(timeout=20_000)
    assert outside == []


@pytest.mark.django_db(transaction=True)
def test_the_schema_answers_concurrent_requests(live_server):
    """Several browsers opening /api/docs/ at once on a threaded server all get the schema."""
    from concurrent.futures import ThreadPoolExecutor
    from urllib.request import urlopen

    def fetch(_):
        with urlopen(f"{live_server.url}/api/schema/", timeout=60) as response:
            return response.status

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(fetch, range(6))) == [200] * 6


@pytest.mark.django_db
def test_the_schema_is_generated_once_per_process_and_format(client, monkeypatch):
    from drf_spectacular.generators import SchemaGenerator

    from config.api_urls import SchemaView

    monkeypatch.setattr(SchemaView, "_documents", {})
    calls = []
    generate = SchemaGenerator.get_schema
    monkeypatch.setattr(SchemaGenerator, "get_schema", lambda self, **kw: calls.append(1) or generate(self, **kw))
    first = client.get("/api/schema/")
    assert client.get("/api/schema/").content == first.content and len(calls) == 1
    as_json = client.get("/api/schema/?format=json")
    assert as_json["Content-Type"].startswith("application/vnd.oai.openapi+json") and as_json.json()["openapi"]
    client.get("/api/schema/?format=json")
    assert len(calls) == 2
