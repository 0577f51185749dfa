"""Search of steps across a collection, with the shipped sentence model."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from failures import search_selectors
from failures.models import (AttributionSource, FailureAttribution, SourceKind, StepDocument, StepPageDocument,
                             StepVector, StepVectorsVersion)
from failures.search_selectors import SearchFilters, search_filters, search_steps
from failures.services.annotations import record_failure_annotation
from failures.services.step_vectors import index_step_vectors
from tests.factories import AgentRunFactory, ImportJobFactory, StepFactory, TaskFactory, TrajectoryFactory, UserFactory
from trajectories.models import ImportJob, Step, Trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_vectors():
    """Each test's rolled-back rows may reuse the ids of another's: no vectors kept between tests."""
    search_selectors._all_vectors.cache_clear()
    yield
    search_selectors._all_vectors.cache_clear()


@pytest.fixture
def collection():
    shop, forum = AgentRunFactory(name="shop"), AgentRunFactory(name="forum")
    failed = TrajectoryFactory(run=shop, task=TaskFactory(benchmark="webarena", task_id="7"), success=False,
                               final_answer="The order total is <b>$12</b>", step_count=3)
    StepFactory(trajectory=failed, index=1, action="click [12]",
                reasoning="The page shows a challenge asking to prove I am not a robot")
    StepFactory(trajectory=failed, index=2, action="type [5] [red shoes]", reasoning="Search the shop for red shoes")
    StepFactory(trajectory=failed, index=3, action="stop [$12]", reasoning="Done")
    passed = TrajectoryFactory(run=forum, task=TaskFactory(benchmark="mind2web", task_id="9"), success=True,
                               step_count=1)
    StepFactory(trajectory=passed, index=1, action="scroll [down]", reasoning="Read the reviews of the red sofa",
                observation="<script>alert(1)</script> reviews")
    return failed, passed


def _found(user, query, **filters):
    return [(hit.trajectory.task.task_id, hit.index) for hit in search_steps(user, query, SearchFilters(**filters))]


def test_vectors_are_stored_once_per_step(collection):
    assert index_step_vectors() == 4
    assert index_step_vectors() == 0
    vector = StepVector.objects.order_by("pk").first().vector
    assert len(bytes(vector)) == 384


def test_a_finished_import_asks_a_worker_for_its_steps_vectors(collection, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        ImportJobFactory(status=ImportJob.Status.DONE)
    assert StepVector.objects.count() == 4


def _meaning(query):
    """The meaning half over every step, and whether it read the stored vectors to answer."""
    with CaptureQueriesContext(connection) as queries:
        ranking = search_selectors.meaning_ranking(query, Trajectory.objects.all(), everything=True)
    return ranking, any('FROM "failures_stepvector"' in query["sql"] for query in queries)


def _stamp():
    return StepVectorsVersion.objects.values_list("stamp", flat=True).first()


def test_the_vectors_in_memory_are_read_again_after_every_write_and_only_then(collection):
    failed, passed = collection
    index_step_vectors()
    assert _meaning("a robot check")[1]
    assert not _meaning("a robot check")[1]  # nothing written since
    TrajectoryFactory().delete()  # a cascade that finds no vectors changes nothing
    Step.objects.filter(trajectory=failed).update(reasoning="Done")  # nor does a step's text
    assert not _meaning("a robot check")[1]

    StepFactory(trajectory=passed, index=2, reasoning="Paying for the sofa with a card")
    index_step_vectors()
    ranking, read = _meaning("paid by credit card")
    assert read and next(iter(ranking)) == (passed.pk, 2)

    Step.objects.filter(trajectory=passed, index=2).update(index=5)  # the steps' keys are kept with the vectors
    ranking, read = _meaning("paid by credit card")
    assert read and next(iter(ranking)) == (passed.pk, 5)

    passed.delete()  # its steps' vectors go by cascade
    ranking, read = _meaning("paid by credit card")
    assert read and set(ranking) == {(failed.pk, 1), (failed.pk, 2), (failed.pk, 3)}

    # Re-indexed: as many vectors as before and the same last step, but one of them new.
    Step.objects.filter(trajectory=failed, index=1).update(
        action="", reasoning="The forecast says heavy rain all day tomorrow")
    StepVector.objects.all().delete()
    index_step_vectors()
    ranking, read = _meaning("a wet and stormy day ahead")
    assert read and next(iter(ranking)) == (failed.pk, 1)
    assert not _meaning("a wet and stormy day ahead")[1]


def test_the_vectors_version_changes_with_updates_and_never_repeats_a_rolled_back_one(collection):
    index_step_vectors()
    first = _stamp()
    StepVector.objects.filter(step__index=1).update(vector=bytes(384))
    updated = _stamp()
    assert updated not in (None, first)
    with pytest.raises(RuntimeError), transaction.atomic():
        StepVector.objects.all().delete()
        rolled_back = _stamp()
        raise RuntimeError
    assert _stamp() == updated
    StepVector.objects.filter(step__index=2).delete()
    assert _stamp() not in (first, updated, rolled_back)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite has no TRUNCATE")
def test_emptying_the_vectors_table_changes_the_version(collection):
    index_step_vectors()
    before = _stamp()
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the steps' deferred checks, run before a TRUNCATE
        cursor.execute("TRUNCATE failures_stepvector")
    assert _stamp() != before


def test_keyword_and_meaning_both_find_steps_the_shared_word_first(collection):
    user = UserFactory()
    index_step_vectors()
    found = _found(user, "red shoes")
    assert found[0] == ("7", 2)  # both words, and the nearest in meaning
    assert ("9", 1) in found  # "red" only
    # No word in common: found by meaning alone, first.
    [hit, *_] = search_steps(user, "captcha blocked the sign in")
    assert (hit.index, hit.keyword_terms) == (1, 0) and hit.similarity > 0.3


def test_the_final_answer_is_searched_as_the_last_steps(collection):
    [hit, *_] = search_steps(UserFactory(), "order total")
    assert (hit.index, hit.snippet.field, hit.snippet.match) == (3, "final answer", "order")
    assert hit.url == (reverse("metrics:trajectory-detail", args=[hit.trajectory.pk])
                       + "?find=order+total&find_step=3#step-3")


def test_filters_by_run_benchmark_and_outcome(collection):
    failed, passed = collection
    user = UserFactory()
    index_step_vectors()
    assert {key[0] for key in _found(user, "red", run_id=passed.run_id)} == {"9"}
    assert {key[0] for key in _found(user, "red", benchmark="webarena")} == {"7"}
    assert {key[0] for key in _found(user, "red", outcome="success")} == {"9"}


def test_failure_type_filter_and_notes_stay_blind_as_on_the_trajectory_page(collection, annotator, other_annotator):
    failed, _ = collection
    record_failure_annotation(failed, other_annotator, step=1, failure_type="blocked_by_site", note="zebra captcha")
    # Not annotated it yet: neither the note nor the type shows.
    assert _found(annotator, "zebra") == []
    assert _found(annotator, "shoes", failure_type="blocked_by_site") == []
    viewer = UserFactory()  # no annotator role: sees every attribution, as on the page
    assert _found(viewer, "zebra") == [("7", 1)]
    source = AttributionSource.objects.get(kind=SourceKind.HUMAN)
    assert _found(viewer, "shoes", failure_type="blocked_by_site", source_id=source.pk) == [("7", 2)]
    assert _found(viewer, "shoes", failure_type="looped") == []
    record_failure_annotation(failed, annotator, step=2, failure_type="looped")
    assert _found(annotator, "zebra") == [("7", 1)]


def test_a_step_on_a_later_page_is_linked_on_its_page(collection, settings):
    failed, _ = collection
    settings.TRAJECTORY_STEPS_PER_PAGE = 2
    [hit] = search_steps(UserFactory(), "order total")
    assert hit.url.endswith(f"/trajectories/{failed.pk}/?find=order+total&find_step=3&steps_page=2#step-3")


def test_bad_filters_name_the_parameter():
    with pytest.raises(ValueError, match="run: a whole number"):
        search_filters({"run": "x"})
    with pytest.raises(ValueError, match="outcome: one of"):
        search_filters({"outcome": "maybe"})


def test_the_page_shows_results_escaped_and_linked(client, collection):
    client.force_login(UserFactory())
    index_step_vectors()
    response = client.get(reverse("failures:search"), {"q": "alert"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert(1)" not in html and "&lt;script&gt;<mark>alert</mark>" in html
    assert reverse("failures:search") in html  # in the navigation
    response = client.get(reverse("failures:search"), {"q": "order", "run": "x"})
    assert "Search not run: run: a whole number" in response.content.decode()


def test_the_page_needs_an_account(client):
    response = client.get(reverse("failures:search"), {"q": "x"})
    assert response.status_code == 302


def test_the_api_returns_ranked_steps_and_refuses_bad_filters(client, collection):
    failed, _ = collection
    client.force_login(UserFactory())
    body = client.get(reverse("api-step-search"), {"q": "order total", "outcome": "failure"}).json()
    first = body["results"][0]
    assert (first["trajectory"], first["step"], first["run"], first["benchmark"]) == (failed.pk, 3, "shop", "webarena")
    assert first["snippet"]["before"] == "The " and first["snippet"]["match"] == "order"
    assert client.get(reverse("api-step-search"), {"q": "x", "outcome": "maybe"}).status_code == 400
    assert client.get(reverse("api-step-search")).status_code == 400


def _keys(matches):
    return {(trajectory_id, index) for trajectory_id, index, _ in matches if index is not None}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="full-text search is PostgreSQL's")
def test_full_text_search_finds_what_the_substring_search_finds(collection, other_annotator):
    failed, _ = collection
    record_failure_annotation(failed, other_annotator, step=1, failure_type="blocked_by_site", note="zebra captcha")
    assert StepDocument.objects.count() == StepPageDocument.objects.count() == 4  # written by the trigger
    user = UserFactory()
    for query in ("red shoes", "reviews", "robot challenge", "order total", "alert", "12", "zebra", "nowhere"):
        terms, scope = search_selectors.query_terms(query), Trajectory.objects.all()
        full_text = _keys(search_selectors.full_text_matches(terms, scope, user, everything=True))
        assert full_text == _keys(search_selectors.substring_matches(terms, scope, user, everything=True)), query
        assert full_text == _keys(search_selectors.full_text_matches(terms, scope, user)), query
    assert _keys(search_selectors.full_text_matches(("red",), Trajectory.objects.all(), user)) == {
        (failed.pk, 2), (collection[1].pk, 1)}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="full-text search is PostgreSQL's")
def test_full_text_search_stems_ranks_the_reasoning_over_the_page_text_and_follows_edits(collection):
    failed, passed = collection
    user = UserFactory()
    ranking = search_selectors.keyword_ranking(("shoe",), Trajectory.objects.all(), user)
    assert list(ranking) == [(failed.pk, 2)]  # "shoes", stemmed
    StepFactory(trajectory=failed, index=4, action="click [1]", reasoning="", observation="red shoes on sale")
    assert list(search_selectors.keyword_ranking(("shoes",), Trajectory.objects.all(), user)) == [
        (failed.pk, 2), (failed.pk, 4)]  # in the reasoning first, in the page text after
    Step.objects.filter(trajectory=passed, index=1).update(reasoning="A quokka on the page")
    assert list(search_selectors.keyword_ranking(("quokka",), Trajectory.objects.all(), user)) == [(passed.pk, 1)]
    assert search_selectors.keyword_ranking(("sofa",), Trajectory.objects.all(), user) == {}
    passed.delete()
    assert not StepDocument.objects.filter(trajectory_id=passed.pk).exists()


def test_a_result_opens_the_trajectory_at_its_step_the_words_marked_in_escaped_text(client):
    trajectory = TrajectoryFactory(final_answer="<b>Red</b> & done", step_count=2)
    StepFactory(trajectory=trajectory, index=1, action="click [1]", reasoning="Nothing here")
    StepFactory(trajectory=trajectory, index=2, action="type [5] [red <i>]", action_value="red <i>",
                reasoning="<script>alert('red')</script> </mark><mark>red shoes &amp; more",
                observation="<img src=x onerror=alert(1)> red tree")
    client.force_login(UserFactory())
    [hit] = [hit for hit in search_steps(UserFactory(), "red shoes amp") if hit.index == 2]
    html = client.get(hit.url).content.decode()
    assert ("&lt;script&gt;alert(&#x27;<mark>red</mark>&#x27;)&lt;/script&gt; &lt;/mark&gt;&lt;mark&gt;"
            "<mark>red</mark> <mark>shoes</mark> &amp;<mark>amp</mark>; more") in html  # never inside an entity
    assert "<script>alert" not in html and "<img src=x" not in html and "<i>" not in html
    assert "type [5] [<mark>red</mark> &lt;i&gt;]" in html
    assert "&lt;img src=x onerror=alert(1)&gt; <mark>red</mark> tree" in html
    assert '<details class="tj-tree" open>' in html  # the step's page text holds a word: shown
    assert "&lt;b&gt;<mark>Red</mark>&lt;/b&gt; &amp; done" in html
    plain = client.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])).content.decode()
    assert "<mark>" not in plain and '<details class="tj-tree">' in plain
