"""The home page's guided start links each step to real things the platform holds."""

import pytest
from django.contrib.auth.models import Group

from annotation.models import GoldStatus
from tests.factories import GoldTrajectoryFactory, TrajectoryFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_an_empty_platform_says_how_to_load_the_demo_data(client):
    content = client.get("/").content.decode()
    assert "Start here" in content and "manage.py load_demo" in content and "Log in" in content


def test_the_guided_start_links_runs_gold_evaluations_and_the_leaderboard(client):
    trajectory = TrajectoryFactory(run__name="gpt-4-turbo")
    gold = GoldTrajectoryFactory(task=trajectory.task, status=GoldStatus.APPROVED)
    user = UserFactory(username="ann")
    user.groups.add(Group.objects.get(name="annotator"))
    client.force_login(user)
    content = client.get("/").content.decode()
    for step in ("1. Upload a run", "2. Record gold steps", "3. Evaluate", "4. Compare on the leaderboard"):
        assert step in content
    assert f'href="/runs/{trajectory.run.pk}/">gpt-4-turbo</a>' in content
    assert f'href="/annotation/gold/{gold.pk}/"' in content
    assert 'href="/evaluations/">Evaluations</a>' in content  # in the navigation too
    assert "load_demo" not in content


@pytest.mark.parametrize(("role", "links"), [
    (None, ["Runs", "Upload run", "Import verdicts", "Tasks", "Evaluations", "Leaderboard", "Compare",
            "Judges vs humans", "Judge quality", "Docs", "API"]),
    ("annotator", ["Annotate"]),
    ("reviewer", ["Annotate", "Review", "Import gold", "Agreement", "Gold quality", "Judge audit"]),
])
def test_the_navigation_holds_every_page_a_role_may_use(client, role, links):
    import re

    user = UserFactory()
    if role:
        user.groups.add(Group.objects.get(name=role))
    client.force_login(user)
    nav = client.get("/").content.decode().split('id="mainnav"', 1)[1].split("</nav>", 1)[0]
    shown = re.findall(r'<a href="([^"]+)">([^<]+)</a>', nav)
    assert set(links) <= {name for _, name in shown}
    for address, _ in shown:
        assert client.get(address).status_code == 200, address
    if role is None:
        assert "Review" not in {name for _, name in shown} and "Annotate" not in {name for _, name in shown}
