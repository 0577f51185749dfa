import pytest
from django.urls import reverse

from failures.models import AttributionSource, FailureAttribution, FailureTaxonomy, SourceKind
from failures.selectors import annotation_queue, failure_panel, human_agreement, taxonomy
from failures.services.annotations import AnnotationError, record_failure_annotation, save_taxonomy
from failures.taxonomy import DEFAULT_TYPES, TaxonomyError, parse_types
from tests.factories import StepFactory, TrajectoryFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed():
    trajectory = TrajectoryFactory(success=False, step_count=4)
    for index in range(1, 5):
        StepFactory(trajectory=trajectory, index=index, agent="WebSurfer" if index % 2 else "Orchestrator")
    return trajectory


def test_an_annotation_keeps_step_type_agent_and_note_and_a_second_replaces_it(failed, annotator):
    record_failure_annotation(failed, annotator, step="2", failure_type="looped", agent="WebSurfer", note="n")
    record_failure_annotation(failed, annotator, step=3, failure_type="wrong_value", note="typed 2023")

    [row] = FailureAttribution.objects.all()
    assert (row.step_index, row.failure_type, row.agent, row.note) == (3, "wrong_value", "", "typed 2023")
    assert (row.source.kind, row.source.name, row.annotator_name) == (SourceKind.HUMAN, "human graders", "alice")


@pytest.mark.parametrize(("step", "failure_type", "message"), [
    ("5", "looped", "not one of the trajectory's steps 1 to 4"),
    ("0", "looped", "not one of the trajectory's steps 1 to 4"),
    ("two", "looped", "'two' is not a step number"),
    ("2", "bored", "failure type 'bored' is not one of webarena's"),
])
def test_a_bad_annotation_is_refused_naming_its_field(failed, annotator, step, failure_type, message):
    with pytest.raises(AnnotationError, match=message):
        record_failure_annotation(failed, annotator, step=step, failure_type=failure_type)
    assert not FailureAttribution.objects.exists()


def test_a_successful_trajectory_has_no_decisive_step(annotator):
    with pytest.raises(AnnotationError, match="succeeded"):
        record_failure_annotation(TrajectoryFactory(success=True, step_count=2), annotator, step=1,
                                  failure_type="looped")


def test_others_annotations_stay_hidden_until_the_annotator_annotated(failed, annotator, other_annotator):
    record_failure_annotation(failed, other_annotator, step=1, failure_type="looped")

    blind = failure_panel(failed, annotator)
    assert (blind.blind, blind.hidden, blind.attributions) == (True, 1, [])
    assert blind.agents == ["WebSurfer", "Orchestrator"]

    record_failure_annotation(failed, annotator, step=2, failure_type="looped")
    seen = failure_panel(failed, annotator)
    assert not seen.blind and [a.annotator_name for a in seen.attributions] == ["bob", "alice"]
    assert seen.mine.step_index == 2


def test_a_reader_without_the_annotator_role_sees_every_annotation(failed, annotator):
    record_failure_annotation(failed, annotator, step=1, failure_type="looped")

    panel = failure_panel(failed, UserFactory())

    assert not panel.can_annotate and len(panel.attributions) == 1


def test_the_queue_holds_failures_not_yet_annotated_by_the_user_fewest_annotations_first(failed, annotator,
                                                                                         other_annotator):
    annotated_by_bob = TrajectoryFactory(success=False, step_count=2)
    record_failure_annotation(annotated_by_bob, other_annotator, step=1, failure_type="looped")
    TrajectoryFactory(success=True)
    TrajectoryFactory(success=None)
    mine = TrajectoryFactory(success=False, step_count=2)
    record_failure_annotation(mine, annotator, step=1, failure_type="looped")

    queue = annotation_queue(annotator)

    assert queue == [failed, annotated_by_bob]
    assert [t.annotations for t in queue] == [0, 1]
    assert annotation_queue(annotator, run_id=failed.run_id) == [failed]


def test_a_benchmark_taxonomy_replaces_the_default_and_a_bad_line_is_named():
    assert taxonomy("webarena") == DEFAULT_TYPES
    save_taxonomy("gaia", "tool_misuse | Tool misuse | Called a tool wrongly.\n\nplan | Bad plan | Planned badly.")

    assert [t.key for t in taxonomy("gaia")] == ["tool_misuse", "plan"]
    with pytest.raises(TaxonomyError, match="line 2: key 'plan' is used twice"):
        parse_types("plan | A | b\nplan | C | d")
    with pytest.raises(TaxonomyError, match="line 1: expected `key | name | definition`"):
        parse_types("plan | A")
    with pytest.raises(TaxonomyError, match="key 'Bad Key'"):
        parse_types("Bad Key | A | b")


def test_human_agreement_pairs_graders_of_the_same_trajectory(annotator, other_annotator):
    first, second = (TrajectoryFactory(success=False, step_count=6) for _ in range(2))
    record_failure_annotation(first, annotator, step=2, failure_type="looped")
    record_failure_annotation(first, other_annotator, step=3, failure_type="looped")
    record_failure_annotation(second, annotator, step=1, failure_type="looped")
    record_failure_annotation(second, other_annotator, step=5, failure_type="wrong_value")

    result = human_agreement()

    assert result.pairs == 2
    assert (result.exact.value, result.within_1.value, result.within_3.value) == (0.0, 0.5, 0.5)
    assert result.failure_type.value == 0.5
    assert human_agreement(run_id=first.run_id).pairs == 1


def test_the_trajectory_page_form_saves_and_escapes_what_was_typed(client, failed, annotator, other_annotator):
    record_failure_annotation(failed, other_annotator, step=1, failure_type="looped", note="<b>bold</b>")
    client.force_login(annotator)
    page = client.get(reverse("metrics:trajectory-detail", args=[failed.pk]))
    assert b'id="failure-form"' in page.content and b'id="failures-hidden"' in page.content
    assert b"<b>bold</b>" not in page.content

    response = client.post(reverse("failures:annotate", args=[failed.pk]),
                           {"step": "2", "failure_type": "looped", "agent": "Orchestrator",
                            "note": "<script>x</script>"})

    assert response.status_code == 302 and response.url.endswith(f"/trajectories/{failed.pk}/#failure")
    page = client.get(reverse("metrics:trajectory-detail", args=[failed.pk])).content.decode()
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>x</script>" not in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page


def test_a_successful_trajectory_without_attributions_shows_no_failure_panel(client, annotator):
    succeeded = TrajectoryFactory(success=True, step_count=1)
    client.force_login(annotator)

    page = client.get(reverse("metrics:trajectory-detail", args=[succeeded.pk])).content.decode()

    assert 'id="failure"' not in page
    assert client.get(reverse("readme-section", args=["why-it-failed"])).status_code == 200


def test_a_refused_annotation_says_why_on_the_page(client, failed, annotator):
    client.force_login(annotator)

    page = client.post(reverse("failures:annotate", args=[failed.pk]), {"step": "9", "failure_type": "looped"},
                       follow=True)

    assert ("Failure annotation not saved: decisive step 9 is not one of the trajectory&#x27;s steps"
            in page.content.decode())


def test_annotating_needs_the_annotator_role(client, failed):
    client.force_login(UserFactory())

    assert client.post(reverse("failures:annotate", args=[failed.pk]),
                       {"step": "1", "failure_type": "looped"}).status_code == 403
    assert client.get(reverse("failures:queue")).status_code == 403


def test_queue_and_agreement_pages(client, failed, annotator, other_annotator):
    record_failure_annotation(failed, other_annotator, step=1, failure_type="looped")
    client.force_login(annotator)

    queue = client.get(reverse("failures:queue")).content.decode()
    assert f'/trajectories/{failed.pk}/#failure' in queue

    record_failure_annotation(failed, annotator, step=2, failure_type="looped")
    agreement = client.get(reverse("failures:agreement")).content.decode()
    assert "1 pair of annotations" in agreement
    assert client.get(reverse("failures:queue")).content.decode().count('id="queue-empty"') == 1


def test_only_reviewers_edit_a_benchmarks_failure_types(client, annotator, reviewer):
    url = reverse("failures:taxonomy", args=["gaia"])
    client.force_login(annotator)
    assert "The default types" in client.get(url).content.decode()
    assert client.post(url, {"types": "a | A | b"}).status_code == 403

    client.force_login(reviewer)
    refused = client.post(url, {"types": "a | <i>A</i>"})
    assert refused.status_code == 400 and "line 1: expected" in refused.content.decode()
    client.post(url, {"types": "tool_misuse | <i>Tool</i> | Called a tool wrongly."})
    page = client.get(url).content.decode()
    assert FailureTaxonomy.objects.get(benchmark="gaia").types[0]["key"] == "tool_misuse"
    assert "&lt;i&gt;Tool&lt;/i&gt;" in page and "The benchmark's own types" in page
    assert AttributionSource.objects.count() == 0
