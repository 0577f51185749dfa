"""The offline rules over a run, every source against the people, and the run page's failure types."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from failures.models import AttributionSource, FailureAttribution, SourceKind, ThemeJob
from failures.selectors import attribution_table, failure_types
from failures.services.annotations import record_failure_annotation
from failures.services.attribution import attribute_by_rules
from metrics.services.runs import delete_run
from tests.factories import AgentRunFactory, StepFactory, TrajectoryFactory, UserFactory
from trajectories.services.ingest import import_paths

pytestmark = pytest.mark.django_db


def _failed(run, actions):
    trajectory = TrajectoryFactory(run=run, success=False, step_count=len(actions))
    for index, (agent, action, reasoning) in enumerate(actions, start=1):
        StepFactory(trajectory=trajectory, index=index, agent=agent, action=action, reasoning=reasoning)
    return trajectory


@pytest.fixture
def run():
    return AgentRunFactory(name="team")


def test_the_rules_attribute_each_failed_trajectory_once(run, annotator):
    erred = _failed(run, [("Coder", "write", "code"), ("terminal", "run", "exitcode: 1 (execution failed)"),
                          ("Coder", "stop [x]", "")])
    looped = _failed(run, [("", "click [3]", ""), ("", "scroll [down]", ""), ("", "scroll [down]", ""),
                           ("", "scroll [down]", "")])
    TrajectoryFactory(run=run, success=True, step_count=2)

    assert attribute_by_rules(run) == 2
    assert attribute_by_rules(run) == 2

    rows = {row.trajectory_id: row for row in FailureAttribution.objects.filter(source__kind=SourceKind.RULE)}
    assert (rows[erred.pk].step_index, rows[erred.pk].agent) == (1, "Coder")
    assert rows[erred.pk].note.startswith("first_error: step 2 (terminal) reports 'exitcode: 1'")
    assert (rows[looped.pk].step_index, rows[looped.pk].note[:5]) == (2, "loop:")


def test_every_source_against_the_people_between_their_ceiling_and_the_random_floor(run, annotator,
                                                                                    other_annotator):
    first = _failed(run, [("A", "a", ""), ("B", "b", ""), ("A", "c", ""), ("B", "d", "")])
    second = _failed(run, [("A", "a", ""), ("B", "b", "")])
    record_failure_annotation(first, annotator, step=2, failure_type="looped", agent="B")
    record_failure_annotation(first, other_annotator, step=2, failure_type="looped", agent="B")
    record_failure_annotation(second, annotator, step=1, failure_type="wrong_value", agent="A")
    judge = AttributionSource.objects.create(kind=SourceKind.JUDGE, name="all at once", model="m")
    FailureAttribution.objects.create(trajectory=first, source=judge, step_index=3, agent="B")
    FailureAttribution.objects.create(trajectory=second, source=judge, step_index=1, agent="B")

    ceiling, source, floor = attribution_table(run.pk)

    assert (ceiling.role, ceiling.result.pairs, ceiling.result.exact.value) == ("ceiling", 1, 1.0)
    assert (source.label, source.result.pairs) == ("all at once (m)", 2)
    assert (source.result.exact.value, source.result.within_1.value, source.result.agent.value) == (0.5, 1.0, 0.5)
    assert source.result.failure_type.count == 0
    assert floor.role == "floor"
    assert floor.result.exact.value == pytest.approx((1 / 4 + 1 / 2) / 2)
    assert floor.result.agent.value == pytest.approx(0.5)
    assert floor.result.failure_type.value == pytest.approx(1 / 9)


def test_measured_against_one_person_the_others_are_a_source(run, annotator, other_annotator):
    trajectory = _failed(run, [("A", "a", ""), ("B", "b", "")])
    record_failure_annotation(trajectory, annotator, step=2, failure_type="looped")
    human = AttributionSource.objects.get(kind=SourceKind.HUMAN)
    imported = AttributionSource.objects.create(kind=SourceKind.IMPORTED, name="paper")
    FailureAttribution.objects.create(trajectory=trajectory, source=imported, step_index=1)

    rows = attribution_table(run.pk, reference=imported)

    assert [row.label for row in rows] == ["People against each other (ceiling)", "human graders",
                                           "Random choice (floor)"]
    assert rows[1].result.exact.value == 0.0 and rows[0].result.exact.value == 0.0
    assert rows[1].source == human


def test_failure_types_of_a_run_by_the_people_or_one_source(run, annotator, other_annotator):
    trajectories = [_failed(run, [("", "a", ""), ("", "b", "")]) for _ in range(3)]
    record_failure_annotation(trajectories[0], annotator, step=1, failure_type="looped")
    record_failure_annotation(trajectories[0], other_annotator, step=1, failure_type="looped")
    record_failure_annotation(trajectories[1], annotator, step=1, failure_type="looped")
    record_failure_annotation(trajectories[2], annotator, step=2, failure_type="blocked_by_site")
    attribute_by_rules(run)

    counts, untyped = failure_types(run)
    assert [(row.name, row.count, round(row.share, 3)) for row in counts] == [
        ("Looped", 2, 0.667), ("Blocked by the site", 1, 0.333)]
    assert untyped == 0
    rules = AttributionSource.objects.get(kind=SourceKind.RULE)
    assert failure_types(run, rules) == ([], 3)


def test_the_run_page_shows_failure_types_and_starts_the_rules(client, run, annotator):
    run.uploaded_by = UserFactory()
    run.save()
    trajectory = _failed(run, [("", "a", ""), ("", "b", "")])
    record_failure_annotation(trajectory, annotator, step=1, failure_type="looped", note="<i>x</i>")
    client.force_login(annotator)
    page = client.get(reverse("metrics:run-detail", args=[run.pk])).content.decode()
    assert 'id="failure-type-counts"' in page and "Looped</a></td>" in page
    assert 'id="run-rules-form"' not in page
    assert client.post(reverse("failures:run-rules", args=[run.pk])).status_code == 403

    client.force_login(run.uploaded_by)
    response = client.post(reverse("failures:run-rules", args=[run.pk]), follow=True)
    assert "The offline rules attributed 1 failed trajectory." in response.content.decode()
    page = client.get(reverse("failures:attribution") + f"?run={run.pk}").content.decode()
    assert "offline rules (rules/v1)" in page and "Random choice (floor)" in page


def test_the_command_attributes_and_prints_the_table_on_the_shared_who_and_when_logs(shared_data, capsys):
    run = AgentRunFactory(name="captain")
    import_paths([shared_data / "failure-attribution" / "who-and-when" / "algorithm-generated"], run)

    call_command("attribute_failures", "--run", "captain")

    out = capsys.readouterr().out.splitlines()
    assert out[0] == "offline rules: 10 failed trajectories attributed"
    floor = out[-1].split("\t")
    # 1/len(history) averaged over the ten logs (6, 10, 7, 8, 8, 9, 8, 10, 10 and 5 messages).
    assert floor[:2] == ["Random choice (floor)", "10"]
    assert float(floor[3]) == pytest.approx(sum(1 / n for n in (6, 10, 7, 8, 8, 9, 8, 10, 10, 5)) / 10, abs=5e-4)


def test_deleting_a_run_takes_its_attributions_and_themes_and_keeps_the_sources(run, annotator):
    trajectory = _failed(run, [("", "a", ""), ("", "b", "")])
    record_failure_annotation(trajectory, annotator, step=1, failure_type="looped")
    attribute_by_rules(run)
    ThemeJob.objects.create(run=run)

    delete_run(run)

    assert not FailureAttribution.objects.exists() and not ThemeJob.objects.exists()
    assert AttributionSource.objects.count() == 2
