"""The shared Who&When logs imported as trajectories with their annotators' attribution."""

import pytest
from django.urls import reverse

from failures.models import FailureAttribution, SourceKind
from failures.selectors import human_labels
from tests.factories import AgentRunFactory
from trajectories.models import Step, Task, Trajectory
from trajectories.services.ingest import import_paths

pytestmark = pytest.mark.django_db


@pytest.fixture
def logs(shared_data):
    return shared_data / "failure-attribution" / "who-and-when"


def test_the_hand_crafted_logs_import_with_speakers_tasks_and_labels(logs):
    run = AgentRunFactory(name="magentic-one")

    report = import_paths([logs / "hand-crafted"], run)

    assert report.counts()["imported"] == 20 and report.ok
    entry = next(e for e in report.files if e.file.endswith("hand-crafted/1.json"))
    assert entry.format == "who_and_when"
    assert any(note.startswith("task assistantbench/6e3be83d") and "created from this file" in note
               for note in entry.notes)
    trajectory = Trajectory.objects.get(pk=entry.trajectory_id)
    assert (trajectory.step_count, trajectory.success, trajectory.final_answer) == (
        29, False, "Alliance Jiu Jitsu, NY Jidokwan Taekwondo")
    assert list(Step.objects.filter(trajectory=trajectory, index__in=[1, 4, 13]).values_list("agent", "action")) == [
        ("human", "human"), ("Orchestrator", "Orchestrator (-> WebSurfer)"), ("WebSurfer", "WebSurfer")]
    assert trajectory.task.reference_answers == {"exact_match": "Renzo Gracie Jiu-Jitsu Wall Street"}
    assert Task.objects.filter(benchmark="gaia").count() == 8  # UUID ids; the other 12 are SHA-256
    assert Task.objects.filter(benchmark="assistantbench").count() == 12
    [label] = FailureAttribution.objects.filter(trajectory=trajectory)
    assert (label.source.kind, label.source.name, label.step_index, label.agent) == (
        SourceKind.IMPORTED, "Who&When annotators", 13, "WebSurfer")
    assert label.note.startswith("WebSurfer clicks on an irrelevant website")
    assert label.source_name.endswith("hand-crafted/1.json") and label.origin == "import"
    assert FailureAttribution.objects.count() == 20


def test_importing_again_even_to_replace_keeps_one_label(logs):
    run = AgentRunFactory()
    import_paths([logs / "algorithm-generated"], run)

    again = import_paths([logs / "algorithm-generated"], run)
    assert again.counts()["unchanged"] == 10
    replaced = import_paths([logs / "algorithm-generated" / "1.json"], run, replace=True)

    assert replaced.counts()["unchanged"] == 1
    assert FailureAttribution.objects.count() == 10
    assert sorted(label.step for labels in human_labels(run_id=run.pk).values() for label in labels) == [
        1, 2, 2, 3, 3, 4, 5, 5, 6, 6]


def test_the_trajectory_page_shows_the_imported_label_and_offers_its_speakers(client, logs, annotator):
    run = AgentRunFactory()
    import_paths([logs / "algorithm-generated" / "9.json"], run)
    trajectory = run.trajectories.get()
    client.force_login(annotator)

    page = client.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])).content.decode()
    assert "1 other failure annotation hidden until you annotate." in page
    assert '<option value="GameTheory_Expert"' in page

    client.post(reverse("failures:annotate", args=[trajectory.pk]),
                {"step": "2", "failure_type": "hallucinated_answer", "agent": "GameTheory_Expert"})
    page = client.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])).content.decode()
    assert "Who&amp;When annotators" in page and 'href="#step-2">step 2</a>' in page
    assert client.get(reverse("failures:agreement")).content.decode().count("1 pair of annotations") == 1
