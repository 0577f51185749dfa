"""Every success shown names its source, and the three sources can disagree visibly."""

import re

import pytest
from django.urls import reverse

from tests.factories import UserFactory
from tests.metrics.verdict_data import grader, three_voices

pytestmark = pytest.mark.django_db


@pytest.fixture
def voices(django_capture_on_commit_callbacks):
    return three_voices(django_capture_on_commit_callbacks)


def text(response) -> str:
    assert response.status_code == 200
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_trajectory_page_names_every_source_and_their_disagreement(client, voices):
    client.force_login(voices["gina"])
    page = text(client.get(reverse("trajectories:trajectory-detail", args=[voices["disputed"].pk])))
    assert "harness: FAIL (merged_log.txt)" in page
    assert "offline check: PASS (string_match)" in page
    assert "human graders: PASS (mean grade 1.00 of 2 graders)" in page
    assert "The sources disagree: harness vs offline check; harness vs human graders." in page
    # The evaluation box says which verdict its task success is, and shows the check beside it.
    assert "Task success (harness, else offline check) no the harness's verdict; the offline check says yes" in page
    assert "Offline check (string/url match) yes string_match" in page


def test_grades_are_blind_until_one_has_graded(client, voices):
    newcomer = grader("ivan")
    client.force_login(newcomer)
    url = reverse("trajectories:trajectory-detail", args=[voices["disputed"].pk])
    page = text(client.get(url))
    assert "2 grades, hidden until you grade" in page and "answer is right" not in page
    assert "vs human graders" not in page  # the disagreement would give the consensus away
    response = client.post(reverse("trajectories:grade", args=[voices["disputed"].pk]), {"grade": "0.5", "note": "meh"})
    assert response.status_code == 302 and response.url.endswith("#grading")
    page = text(client.get(url))
    assert "answer is right" in page and "Your grade: partially correct" in page
    assert "mean grade 0.83 of 3 graders" in page


def test_only_annotators_and_reviewers_grade(client, voices):
    client.force_login(UserFactory(username="developer"))
    url = reverse("trajectories:trajectory-detail", args=[voices["disputed"].pk])
    assert 'id="grade-form"' not in client.get(url).content.decode()
    assert client.post(reverse("trajectories:grade", args=[voices["disputed"].pk]), {"grade": "1"}).status_code == 403


def test_a_bad_grade_is_refused_with_a_message(client, voices):
    client.force_login(voices["gina"])
    response = client.post(reverse("trajectories:grade", args=[voices["agreed"].pk]), {"grade": "0.3"}, follow=True)
    assert "Grade not saved: grade &#x27;0.3&#x27; is not 1 (correct)" in response.content.decode()
