"""The role matrix of the README, checked against the whole URL map.

Every URL pattern of `config.urls` (and every method of every API endpoint) is requested as an
anonymous visitor and as an account with no role, an annotator, a reviewer and an admin, with
path parameters filled from real rows that none of them owns. The README's table says who gets
in; a pattern missing from the table, or an answer that differs from it, fails.
"""

import re

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from annotation.models import GoldCheckJob, GoldFlag
from failures.models import AttributionJob
from judges.models import JudgeConfig, OutcomeJob
from config.celery import app as celery_app
from config.settings.base import BASE_DIR
from tests import factories
from tests.api.conftest import make_platform, make_users

pytestmark = pytest.mark.django_db

COLUMNS = ("anonymous", "no role", "annotator", "reviewer", "admin")
SECTION = "### Role matrix"
API_METHODS = ("get", "post", "put", "patch", "delete")


def readable(route: str) -> str:
    """`runs/<int:pk>/` -> `/runs/<pk>/`; `api/^exports/gold\\.(?P<fmt>xlsx|csv|json)$` -> `/api/exports/gold.<fmt>`."""
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", route)
    route = re.sub(r"<(?:\w+:)?(\w+)>", r"<\1>", route)
    return "/" + route.replace("^", "").replace("$", "").replace("\\.", ".")


def url_map() -> list[tuple[str, str, object]]:
    """(readable route, URL name with its namespace, view) of every pattern; the admin site as one entry."""
    found = []

    def walk(patterns, prefix="", namespace=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if str(pattern.pattern) == "admin/":
                    found.append(("/admin/", "admin:index", None))
                    continue
                inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                walk(pattern.url_patterns, prefix + str(pattern.pattern), inner)
            elif isinstance(pattern, URLPattern) and pattern.name:  # the API's unnamed catch-all answers 404 to all
                found.append((readable(prefix + str(pattern.pattern)), namespace + pattern.name, pattern.callback))

    walk(get_resolver().url_patterns)
    return found


def methods_of(view) -> list[str]:
    """An API view's methods; None for a page (requested with GET, or POST when it takes only POST)."""
    actions = getattr(view, "actions", None)
    if actions:
        return sorted(method.upper() for method in actions)
    cls = getattr(view, "cls", None)
    if cls is None:
        return None
    return [method.upper() for method in API_METHODS if hasattr(cls, method)]


def readme_matrix() -> dict[tuple[str, str], tuple[str, ...]]:
    """{(method or "*", route): cells} from the README table; `GET /api/x/` names one method, `/x/` all."""
    text = (BASE_DIR / "README.md").read_text()
    table = next(block for block in text.split(SECTION, 1)[1].split("\n\n") if block.startswith("|"))
    rows = [line for line in table.splitlines() if line.startswith("|")][2:]
    matrix = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        access = tuple(cells[-len(COLUMNS):])
        for item in re.findall(r"`([^`]+)`", cells[0]):
            method, _, route = item.rpartition(" ")
            for one in (method or "*").split(","):
                assert (one, route) not in matrix, f"{one} {route} is twice in the README role matrix"
                matrix[(one, route)] = access
    return matrix


@pytest.fixture(scope="module")
def platform(django_db_setup, django_db_blocker, tmp_path_factory):
    """Evaluated runs, gold with a quality flag, a gold check, an import job, a screenshot and a token,
    the objects named by the URLs owned by none of the walking accounts; committed once, flushed after
    the module."""
    media = tmp_path_factory.mktemp("media")
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True  # the evaluations are scored here, whatever the broker
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=media):
        users = make_users()
        users["admin"].is_staff = True  # admins use the Django admin (users, groups, unlocking)
        users["admin"].save()
        try:
            data = make_platform(users)
        finally:
            celery_app.conf.task_always_eager = eager
        owner = factories.UserFactory(username="owner")
        run, other_run = data["runs"]["agent-b"], data["runs"]["agent-a"]
        trajectory = run.trajectories.order_by("pk").first()
        shot = factories.ScreenshotFactory()
        trajectory.steps.filter(index=1).update(screenshot=shot)
        gold = factories.GoldTrajectoryFactory(task=data["tasks"][3], annotator=owner, status="draft")
        factories.GoldStepFactory(gold=gold, index=1)
        check = GoldCheckJob.objects.create(kind=GoldCheckJob.Kind.QUALITY, benchmark=gold.task.benchmark,
                                            created_by=owner)
        flag = GoldFlag.objects.create(gold=gold, kind=GoldFlag.Kind.ONE_STEP, message="One step only.")
        data.update(
            accounts={"anonymous": None, "no role": users["reader"], "annotator": users["annotator"],
                      "reviewer": users["reviewer"], "admin": users["admin"]},
            media=media, run=run, other_run=other_run, task=data["tasks"][0], trajectory=trajectory, shot=shot,
            gold=gold, check=check, flag=flag, job=data["jobs"]["agent-b"], decision=factories.JudgeDecisionFactory(),
            import_job=factories.ImportJobFactory(run=run, created_by=owner),
            outcome_job=OutcomeJob.objects.create(run=run, created_by=owner, judge_config=factories.JudgeConfigFactory(
                name="outcome", backend="openai", model="gpt-4o-mini")),
            attribution_job=AttributionJob.objects.create(run=run, created_by=owner, method="all_at_once",
                                                          judge_config=JudgeConfig.objects.get(name="outcome")),
            token=create_api_token(owner, name="owner's")[0],
        )
    yield data
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(autouse=True)
def _platform_media(_media_root, settings, platform):
    settings.MEDIA_ROOT = platform["media"]


def kwargs_for(name: str, data) -> dict:
    """Path parameters of one URL name, from the platform's rows."""
    pk = {
        "accounts:revoke-api-token": {"token_key": data["token"].token_key},
        "metrics:run-detail": {"pk": data["run"].pk},
        "metrics:run-rename": {"pk": data["run"].pk},
        "readme-section": {"slug": "metrics"},
        "metrics:run-delete": {"pk": data["run"].pk},
        "metrics:trajectory-detail": {"pk": data["trajectory"].pk},
        "trajectories:screenshot": {"sha256": data["shot"].sha256},
        "trajectories:import-job": {"pk": data["import_job"].pk},
        "trajectories:import-job-progress": {"pk": data["import_job"].pk},
        "trajectories:media": {"path": data["shot"].image.name},
        "trajectories:import-job-retry": {"pk": data["import_job"].pk},
        "trajectories:task-detail": {"pk": data["task"].pk},
        "trajectories:grade": {"pk": data["trajectory"].pk},
        "trajectories:step-text": {"pk": data["trajectory"].pk, "index": 1, "field": "reasoning"},
        "failures:annotate": {"pk": data["trajectory"].pk},
        "failures:run-rules": {"pk": data["run"].pk},
        "failures:run-llm": {"pk": data["run"].pk},
        "api-run-attribution": {"pk": data["run"].pk},
        "api-attribution-job": {"pk": data["attribution_job"].pk},
        "metrics:run-failures-from-gold": {"pk": data["run"].pk},
        "api-failure-annotations": {"pk": data["trajectory"].pk},
        "failures:taxonomy": {"benchmark": data["task"].benchmark},
        "media": {"path": data["shot"].image.name},
        "annotation:task": {"task_pk": data["task"].pk},
        "annotation:gold": {"pk": data["gold"].pk},
        "annotation:review": {"pk": data["gold"].pk},
        "annotation:set-reference": {"pk": data["gold"].pk},
        "annotation:dismiss-flag": {"pk": data["flag"].pk},
        "metrics:job": {"pk": data["job"].pk},
        "metrics:cancel": {"pk": data["job"].pk},
        "metrics:rerun": {"pk": data["job"].pk},
        "metrics:start": {"run_pk": data["run"].pk},
        "metrics:judge-outcomes": {"run_pk": data["run"].pk},
        "metrics:outcome-job": {"pk": data["outcome_job"].pk},
        "metrics:outcome-job-retry": {"pk": data["outcome_job"].pk},
        "api-judge-outcomes": {"pk": data["run"].pk},
        "api-outcome-job": {"pk": data["outcome_job"].pk},
        "metrics:compare-task": {"baseline": data["run"].pk, "candidate": data["other_run"].pk,
                                 "task": data["task"].pk},
        "metrics:verdict-agreement": {"run_pk": data["run"].pk},
        "metrics:import-grades": {"run_pk": data["run"].pk},
        "metrics:plot": {"name": "distribution", "fmt": "svg"},
        "metrics:export": {"what": "scores", "fmt": "csv"},
        "metrics:judges-vs-humans-export": {"fmt": "csv"},
        "api-import-job": {"pk": data["import_job"].pk},
        "api-task-detail": {"pk": data["task"].pk},
        "api-run-detail": {"pk": data["run"].pk},
        "api-trajectory-detail": {"pk": data["trajectory"].pk},
        "api-gold-detail": {"pk": data["gold"].pk},
        "api-gold-submit": {"pk": data["gold"].pk},
        "api-gold-review": {"pk": data["gold"].pk},
        "api-gold-steps": {"pk": data["gold"].pk},
        "api-gold-step": {"pk": data["gold"].pk, "index": 1},
        "api-gold-reference": {"pk": data["gold"].pk},
        "api-gold-check": {"pk": data["check"].pk},
        "api-gold-flag-dismiss": {"pk": data["flag"].pk},
        "api-requirements": {"benchmark": data["task"].benchmark, "task_id": data["task"].task_id},
        "api-judge-config-detail": {"pk": data["judge"].pk},
        "api-judge-config-test": {"pk": data["judge"].pk},
        "judges:config": {"name": data["judge"].name},
        "judges:config-test": {"name": data["judge"].name},
        "api-judge-decision-detail": {"pk": data["decision"].pk},
        "api-judge-decision-verdict": {"pk": data["decision"].pk},
        "api-run-verdicts": {"pk": data["run"].pk},
        "api-run-agreement": {"pk": data["run"].pk},
        "api-run-grades-import": {"pk": data["run"].pk},
        "api-trajectory-grades": {"pk": data["trajectory"].pk},
        "api-evaluation": {"pk": data["job"].pk},
        "api-evaluation-cancel": {"pk": data["job"].pk},
        "api-evaluation-rerun": {"pk": data["job"].pk},
        "api-evaluation-scores": {"pk": data["job"].pk},
        "api-comparison-task": {"task": data["task"].pk},
        "api-export-scores": {"fmt": "csv"},
        "api-export-decisions": {"fmt": "csv"},
        "api-export-aggregates": {"fmt": "csv"},
        "api-export-leaderboard": {"fmt": "csv"},
        "api-export-gold": {"fmt": "json"},
        "api-export-judges": {"fmt": "csv"},
    }
    return pk.get(name, {})


def query_for(name: str, data) -> dict:
    """Query parameters that let a page answer with content rather than a form error."""
    run = str(data["run"].pk)
    return {"metrics:export": {"run": run}, "api-export-scores": {"run": data["run"].name},
            "api-export-decisions": {"run": data["run"].name}, "api-export-aggregates": {"run": data["run"].name},
            "api-comparison": {"baseline": data["run"].name, "candidate": data["other_run"].name},
            "api-comparison-task": {"baseline": data["run"].name, "candidate": data["other_run"].name}}.get(name, {})


def body_for(method: str, name: str, data) -> dict:
    """A request body valid enough to reach the access check that follows validation."""
    task = data["task"]
    return {
        ("POST", "api-gold-list"): {"benchmark": task.benchmark, "task_id": task.task_id, "steps": [{"text": "Go"}]},
        ("PUT", "api-requirements"): {"requirements": ["42"]},
        ("POST", "api-judge-decision-verdict"): {"verdict": "confirm"},
        ("POST", "api-evaluations"): {"runs": [data["run"].name]},
    }.get((method, name), {})


def bodies_for(method: str, name: str, data) -> list[dict]:
    """An empty body, a wrong one and a valid one; where the body itself names what is refused (the runs of
    an evaluation), a valid one and one wrong elsewhere (an unknown judge)."""
    if (method, name) == ("POST", "api-evaluations"):
        return [body_for(method, name, data), {"runs": [data["run"].name], "judge": "no-such-judge"}]
    return [{}, {"unknown": "field"}, body_for(method, name, data)]


def operations() -> list[tuple[str, str, str]]:
    """(method or "*", readable route, URL name) of every page and API operation."""
    found = []
    for route, name, view in url_map():
        methods = methods_of(view) if view is not None else None
        found += [(method, route, name) for method in methods] if methods else [("*", route, name)]
    return found


def outcome(response) -> str:
    """`yes` when the request passed the access check (whatever it then answered), else `no`."""
    if response.status_code in (401, 403, 404):
        return "no"
    location = response.get("Location", "")
    if response.status_code == 302 and ("/accounts/login/" in location or "/admin/login/" in location):
        return "no"
    return "yes"


def request_as(user, method: str, name: str, data, body=None):
    client = APIClient()
    if user is not None:
        client.force_login(user)
    url = reverse(name, kwargs=kwargs_for(name, data))
    query = query_for(name, data)
    if method == "*":  # a page: GET, or POST (empty form) when it takes only POST
        response = client.get(url, query)
        if response.status_code == 405:
            response = client.post(url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""))
        return response
    if method == "GET":
        return client.get(url, query)
    return getattr(client, method.lower())(url, body_for(method, name, data) if body is None else body,
                                           format="json")


OPERATIONS = operations()


def _walked(cell: str) -> str:
    """A README cell as the walk sees it: `own` rows belong to another account here, so they are refused."""
    word = cell.split()[0]
    assert word in ("yes", "no", "own"), f"unknown role matrix cell {cell!r}"
    return "no" if word == "own" else word


def test_every_url_and_api_operation_is_in_the_readme_matrix():
    documented = readme_matrix()
    walked = {(method, route) for method, route, _ in OPERATIONS}
    assert sorted(walked - set(documented)) == [], "missing from the README role matrix"
    assert sorted(set(documented) - walked) == [], "in the README role matrix but not in the URL map"


@pytest.mark.parametrize(("method", "route", "name"), OPERATIONS, ids=[f"{m} {r}" for m, r, _ in OPERATIONS])
def test_the_url_map_follows_the_role_matrix(platform, method, route, name):
    expected = readme_matrix().get((method, route))
    assert expected is not None, f"{method} {route} is not in the README role matrix"
    seen = {column: outcome(request_as(user, method, name, platform)) for column, user in platform["accounts"].items()}
    assert tuple(seen[column] for column in COLUMNS) == tuple(_walked(cell) for cell in expected), seen


PUBLIC_WHEN_ENABLED = [(method, route, name) for method, route, name in OPERATIONS
                       if "PUBLIC_LEADERBOARD" in readme_matrix().get((method, route), ("",))[0]]


@pytest.mark.parametrize(("method", "route", "name"), PUBLIC_WHEN_ENABLED,
                         ids=[f"{m} {r}" for m, r, _ in PUBLIC_WHEN_ENABLED])
def test_rows_public_with_the_public_leaderboard_open_to_anonymous_visitors(platform, settings, method, route, name):
    settings.PUBLIC_LEADERBOARD = True
    assert outcome(request_as(None, method, name, platform)) == "yes"


def test_only_the_leaderboard_rows_open_with_the_public_leaderboard(platform, settings):
    settings.PUBLIC_LEADERBOARD = True
    opened = {(method, route) for method, route, name in OPERATIONS
              if readme_matrix()[(method, route)][0].startswith("no")
              and outcome(request_as(None, method, name, platform)) == "yes"}
    assert opened == {(method, route) for method, route, _ in PUBLIC_WHEN_ENABLED}


WRITES = [(method, route, name) for method, route, name in OPERATIONS if method in ("POST", "PUT", "PATCH", "DELETE")]


@pytest.mark.parametrize(("method", "route", "name"), WRITES, ids=[f"{m} {r}" for m, r, _ in WRITES])
def test_a_write_refused_to_an_account_is_refused_whatever_its_body(platform, method, route, name):
    """Role and ownership are checked before the body is read: an empty body and a valid one both get the
    refusal (401, 403 or 404), never a 400 that would tell an outsider what the endpoint expects."""
    expected = dict(zip(COLUMNS, readme_matrix()[(method, route)]))
    answered = {}
    for column, user in platform["accounts"].items():
        if _walked(expected[column]) == "no":
            for body in bodies_for(method, name, platform):
                answered[(column, str(body))] = request_as(user, method, name, platform, body).status_code
    assert {key: code for key, code in answered.items() if code not in (401, 403, 404)} == {}
