import pytest
from django.urls import reverse

from tests.factories import AgentRunFactory, StepFactory, TaskFactory, TrajectoryFactory, UserFactory
from trajectories.models import Screenshot, Trajectory
from trajectories.services.ingest import import_paths
from trajectories.services.tallies import refresh_tallies

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client):
    client.force_login(UserFactory(username="viewer"))
    return client


@pytest.fixture
def imported(webarena_tasks, run, samples):
    import_paths([samples], run)
    Trajectory.objects.filter(run=run, task__task_id="0").update(success=True)
    refresh_tallies([run.pk])  # a bulk update recounts the run's stored tallies, as the services do
    return {t.task.task_id: t for t in run.trajectories.select_related("task")}


def test_run_list_counts_outcomes_and_verdicts(viewer, run, imported):
    AgentRunFactory(name="empty-run")
    content = viewer.get(reverse("metrics:run-list")).content.decode()
    assert reverse("metrics:run-detail", args=[run.pk]) in content and "empty-run" in content
    assert "harness <b>1.000</b> <span class=\"muted\">(1 of 1)</span>" in content  # one PASS of one verdict
    assert "1 answered" in content and "1 N/A" in content and "1 early stop" in content


@pytest.mark.parametrize(
    ("query", "tasks"),
    [
        ("", ["0", "3", "6"]),
        ("?outcome=early_stop", ["3"]),
        ("?success=pass", ["0"]),
        ("?success=unknown", ["3", "6"]),
        ("?site=shopping_admin", ["0", "3", "6"]),
        ("?site=gitlab&outcome=na", ["6"]),  # a site the run does not have is ignored
        ("?q=top-5", ["6"]),
        ("?q=6", ["6"]),
    ],
)
def test_run_page_filters(viewer, run, imported, query, tasks):
    response = viewer.get(reverse("metrics:run-detail", args=[run.pk]) + query)
    shown = [t.task.task_id for t in response.context["page"]]
    assert shown == tasks


def test_site_filter_does_not_confuse_similar_names(viewer):
    run = AgentRunFactory()
    TrajectoryFactory(run=run, task=TaskFactory(sites=["shopping_admin"]))
    both = TrajectoryFactory(run=run, task=TaskFactory(sites=["shopping", "reddit"]))
    response = viewer.get(reverse("metrics:run-detail", args=[run.pk]) + "?site=shopping")
    assert list(response.context["page"]) == [both]
    assert [choice for choice, _ in response.context["form"].fields["site"].choices] == [
        "", "reddit", "shopping", "shopping_admin"]


def test_trajectory_page(viewer, imported):
    weak = imported["3"]
    content = viewer.get(reverse("metrics:trajectory-detail", args=[weak.pk])).content.decode()
    assert "What are the top-2 best-selling product in 2022" in content
    assert "Quest Lumaflex™ Band" in content and "Sprite Stasis Ball 65 cm" in content  # must_include answers
    assert content.count('class="tj-step"') == 8
    assert content.count('loading="lazy"') == 8
    first_shot = weak.steps.get(index=1).screenshot
    assert f'src="{reverse("trajectories:screenshot", args=[first_shot.sha256])}"' in content
    assert "Early stop: Failed to parse actions for 3 times" in content
    assert '<details class="tj-tree">' in content
    assert "http://ec2-3-131-244-37.us-east-2.compute.amazonaws.com:7780/admin/admin/dashboard/" in content
    assert "goto [&#x27;http://homepage.com&#x27;]" in content  # planned, while the executed action was none
    assert content.count("tj-actions mismatch") == 2  # steps 7 and 8 planned an action and executed none
    assert content.count("tj-actions no-plan") == 3
    assert content.count("tj-actions match") == 3
    assert 'src="/static/js/trajectory-viewer.js"' in content
    assert reverse("metrics:trajectory-detail", args=[imported["0"].pk]) in content  # previous task
    assert reverse("metrics:trajectory-detail", args=[imported["6"].pk]) in content  # next task


def test_uploaded_text_is_escaped_in_the_page(viewer):
    payload = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
    trajectory = TrajectoryFactory(final_answer=payload, outcome_message=payload)
    StepFactory(trajectory=trajectory, index=1, url=payload, observation=payload, reasoning=payload,
                planned_action=payload, action=payload, element_label=payload, prev_action=payload)
    content = viewer.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])).content.decode()
    assert "<script>document.title" not in content and "<img src=x" not in content
    assert content.count("&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;") >= 7


def test_screenshots_are_served_from_storage(viewer, imported):
    shot = Screenshot.objects.first()
    response = viewer.get(reverse("trajectories:screenshot", args=[shot.sha256]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["Content-Security-Policy"] == "default-src 'none'"
    assert "immutable" in response["Cache-Control"]
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")
    assert viewer.get(reverse("trajectories:screenshot", args=["0" * 64])).status_code == 404


def test_a_crashed_trajectory_has_no_steps(viewer):
    trajectory = TrajectoryFactory(outcome_status="crashed", final_answer=None)
    content = viewer.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])).content.decode()
    assert "No agent steps: the run crashed before the first one." in content


def _long_trajectory(steps: int) -> Trajectory:
    from trajectories.models import Step

    trajectory = TrajectoryFactory(step_count=steps)
    Step.objects.bulk_create([Step(trajectory=trajectory, index=n, action=f"click [{n}]",
                                   reasoning=f"<script>alert({n})</script>") for n in range(1, steps + 1)])
    return trajectory


def test_a_long_trajectory_shows_its_first_steps_and_loads_the_rest_a_page_at_a_time(viewer, settings):
    settings.TRAJECTORY_STEPS_PER_PAGE = 50
    trajectory = _long_trajectory(120)
    url = reverse("metrics:trajectory-detail", args=[trajectory.pk])
    page = viewer.get(url, {"job": "7"}).content.decode()
    assert 'id="step-50"' in page and 'id="step-51"' not in page
    assert "Show steps 51 to 100 of 120" in page
    assert 'data-fragment="?job=7&amp;steps_page=2&amp;fragment=steps"' in page
    more = viewer.get(url, {"job": "7", "steps_page": 2, "fragment": "steps"}).content.decode()
    assert "<html" not in more and 'id="step-51"' in more and 'id="step-100"' in more and 'id="step-50"' not in more
    assert "&lt;script&gt;alert(51)&lt;/script&gt;" in more and "<script>" not in more
    assert "Show steps 101 to 120 of 120" in more
    last = viewer.get(url, {"steps_page": 3, "fragment": "steps"}).content.decode()
    assert 'id="step-120"' in last and "more-steps" not in last
    # without scripts, the link opens the page of those steps
    second = viewer.get(url, {"steps_page": 2}).content.decode()
    assert 'id="step-51"' in second and "Steps 1 to 50" in second


def test_a_long_text_is_cut_on_the_page_with_its_length_and_a_link_to_the_whole(viewer, client):
    from trajectories.selectors import PAGE_TEXT_LIMIT

    reasoning = "why " * (PAGE_TEXT_LIMIT // 2) + "<b>the end</b>"
    trajectory = TrajectoryFactory()
    StepFactory(trajectory=trajectory, index=1, reasoning=reasoning, observation="tree", model_output="")
    page = viewer.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])).content.decode()
    assert "the end" not in page
    whole = reverse("trajectories:step-text", args=[trajectory.pk, 1, "reasoning"])
    assert f'Cut at {PAGE_TEXT_LIMIT} of {len(reasoning)} characters: <a href="{whole}">the whole text</a>' in page
    assert "Accessibility tree (4 characters)" in page and "Cut at 4" not in page
    read = viewer.get(whole)
    assert read.status_code == 200 and read["Content-Type"] == "text/plain; charset=utf-8"
    assert read.content.decode() == reasoning and read["Content-Security-Policy"] == "default-src 'none'"
    assert viewer.get(reverse("trajectories:step-text", args=[trajectory.pk, 1, "action"])).status_code == 404
    assert viewer.get(reverse("trajectories:step-text", args=[trajectory.pk, 2, "reasoning"])).status_code == 404
    viewer.logout()
    assert viewer.get(whole).status_code == 302
