"""Schema-driven test: Schemathesis generates requests from the OpenAPI schema for every API
operation and checks each answer against it: no server error, a documented status code and
content type, a body that matches the response schema, auth actually required.

The WSGI app is called in-process inside each test's transaction, on data built once for the
module by factories (two evaluated runs, removed again at the end); about half the cases swap
generated identifiers for real ones so that detail, comparison and export endpoints answer with
real content, not only with 404s and 400s.
Requests are schema-valid ones: a valid request may still be refused with a documented 400 when
it names something that does not exist (a run, a task), so acceptance of every valid request is
not checked.
"""

import json
import os

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.specs.openapi.checks import positive_data_acceptance

from accounts.services import create_api_token
from tests.api.conftest import make_platform, make_users

pytestmark = pytest.mark.django_db

# A few examples per operation (CI replays the same ones, see HYPOTHESIS_PROFILE in tests/conftest.py);
# SCHEMATHESIS_MAX_EXAMPLES=300 explores further.
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "6"))

schema = schemathesis.openapi.from_dict(
    json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(public=True)))
)
schema.app = get_wsgi_application()
schema.config.generation.update(modes=[schemathesis.GenerationMode.POSITIVE], max_examples=MAX_EXAMPLES)


@pytest.fixture(scope="module")
def platform(django_db_setup, django_db_blocker):
    """Built once, committed, and flushed after the module: each test's own writes roll back."""
    with django_db_blocker.unblock():
        users = make_users()
        data = make_platform(users)
        data["token"] = create_api_token(users["admin"])[1]
    yield data
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(autouse=True)
def _requests_keep_the_test_transaction():
    """As Django's test client does: the test's transaction must survive each request."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _real_values(platform) -> dict:
    tasks, runs = platform["tasks"], platform["runs"]
    trajectory = runs["agent-a"].trajectories.order_by("pk").first()
    return {
        "/api/tasks/{id}/": {"id": tasks[0].pk},
        "/api/runs/{id}/": {"id": runs["agent-a"].pk},
        "/api/trajectories/{id}/": {"id": trajectory.pk},
        "/api/judge-configs/{id}/": {"id": platform["judge"].pk},
        "/api/evaluations/{id}/": {"id": platform["jobs"]["agent-a"].pk},
        "/api/evaluations/{id}/scores/": {"id": platform["jobs"]["agent-a"].pk},
        "/api/comparisons/tasks/{task}/": {"task": tasks[0].pk},
    }


REAL_QUERY = {"baseline": "agent-a", "candidate": "agent-b", "run": ["agent-a"]}


@schema.parametrize()
@schema.given(real=st.booleans())
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case, real, platform):
    if real and case.meta.generation.mode is schemathesis.GenerationMode.POSITIVE:
        case.path_parameters = {**(case.path_parameters or {}), **_real_values(platform).get(case.path, {})}
        names = {parameter.name for parameter in case.operation.query}
        case.query = {**(case.query or {}), **{name: value for name, value in REAL_QUERY.items() if name in names}}
    case.call_and_validate(headers={"Authorization": f"Token {platform['token']}"},
                           excluded_checks=[positive_data_acceptance])
