import pytest

from tests.factories import TaskFactory, TrajectoryFactory
from trajectories.models import Screenshot

pytestmark = pytest.mark.django_db


def test_tasks_filter_by_benchmark_site_and_intent(api):
    TaskFactory(task_id="1", sites=["shopping"], intent="Buy a lamp")
    TaskFactory(task_id="2", sites=["shopping_admin"], intent="Refund order 7")
    TaskFactory(task_id="3", benchmark="mind2web", sites=["shopping"], intent="Buy a chair")

    def ids(query):
        response = api.get(f"/api/tasks/{query}")
        assert response.status_code == 200, response.json()
        return [row["task_id"] for row in response.json()["results"]]

    assert ids("?benchmark=webarena") == ["1", "2"]
    assert ids("?site=shopping") == ["3", "1"]  # by benchmark, then number; not shopping_admin
    assert ids("?site=shopping_admin") == ["2"]
    assert ids("?search=buy&benchmark=mind2web") == ["3"]


def test_task_detail_has_the_published_config(api):
    task = TaskFactory(task_id="7",
                       eval_config={"eval_types": ["string_match"], "reference_answers": {"exact_match": "7"}})
    body = api.get(f"/api/tasks/{task.pk}/").json()
    assert body["eval_config"]["reference_answers"] == {"exact_match": "7"}
    assert body["benchmark"] == "webarena" and "config" in body


def test_pagination_takes_a_page_size(api):
    for number in range(5):
        TaskFactory(task_id=str(number), number=number)
    body = api.get("/api/tasks/?page_size=2&page=2").json()
    assert body["count"] == 5 and [row["task_id"] for row in body["results"]] == ["2", "3"]
    assert body["next"].endswith("page=3&page_size=2") and body["previous"]
    past_the_end = api.get("/api/tasks/?page=9")
    assert past_the_end.status_code == 404 and past_the_end.json()["code"] == "not_found"


def test_runs_with_counts_and_filters(api, platform):
    body = api.get("/api/runs/?paradigm=tree_search").json()
    assert [run["name"] for run in body["results"]] == ["agent-b"]
    run = body["results"][0]
    assert (run["trajectories"], run["passed"], run["judged"]) == (4, 1, 4)
    assert run["outcomes"]["early_stop"] == 4 and run["outcomes"]["answered"] == 0
    detail = api.get(f"/api/runs/{platform['runs']['agent-a'].pk}/").json()
    assert (detail["name"], detail["uploaded_by"]) == ("agent-a", "rob")


def test_trajectories_list_and_detail_with_steps(api, platform):
    listed = api.get("/api/trajectories/?run=agent-a&site=shopping_admin").json()
    assert [row["task"]["task_id"] for row in listed["results"]] == ["101", "102"]
    assert "steps" not in listed["results"][0]
    trajectory = listed["results"][0]
    detail = api.get(f"/api/trajectories/{trajectory['id']}/").json()
    assert [step["action"] for step in detail["steps"]] == ["click [1]", "click [2]", "click [3]"]
    assert detail["steps"][0]["index"] == 1 and detail["steps"][0]["screenshot"] is None
    assert api.get("/api/trajectories/?outcome_status=early_stop").json()["count"] == 4


def test_steps_link_their_screenshot(api):
    trajectory = TrajectoryFactory()
    shot = Screenshot.objects.create(sha256="ab" * 32, image="screenshots/x.png")
    trajectory.steps.create(index=1, action="click [1]", screenshot=shot)
    step = api.get(f"/api/trajectories/{trajectory.pk}/").json()["steps"][0]
    assert step["screenshot"] == f"http://testserver/screenshots/{'ab' * 32}"


def test_reads_need_an_account(db):
    from rest_framework.test import APIClient

    response = APIClient().get("/api/tasks/")
    assert response.status_code == 401
    assert response.json() == {"detail": "Authentication credentials were not provided.", "code": "not_authenticated"}


def test_a_long_trajectorys_steps_come_a_page_at_a_time(api, settings):
    from trajectories.models import Step

    settings.API_STEPS_PAGE_SIZE = 4
    trajectory = TrajectoryFactory()
    Step.objects.bulk_create([Step(trajectory=trajectory, index=n, action=f"click [{n}]") for n in range(1, 11)])
    url = f"/api/trajectories/{trajectory.pk}/"
    first = api.get(url).json()
    assert [step["index"] for step in first["steps"]] == [1, 2, 3, 4]
    assert first["steps_page"] == {"page": 1, "page_size": 4, "count": 10, "previous": None,
                                   "next": f"http://testserver{url}?steps_page=2"}
    last = api.get(url, {"steps_page": 3}).json()
    assert [step["index"] for step in last["steps"]] == [9, 10] and last["steps_page"]["next"] is None
    sized = api.get(url, {"steps_page": 2, "steps_page_size": 3}).json()
    assert [step["index"] for step in sized["steps"]] == [4, 5, 6]
    for query, field in (({"steps_page": 4}, "steps_page"), ({"steps_page": "x"}, "steps_page"),
                         ({"steps_page_size": 5}, "steps_page_size"), ({"steps_page_size": 0}, "steps_page_size")):
        refused = api.get(url, query)
        assert refused.status_code == 400 and field in refused.json()["errors"], query
