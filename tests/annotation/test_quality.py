"""The gold quality checks: on their own (no database), as a job after every import, on the page."""

import json

import pytest
from django.urls import reverse

from annotation import quality
from annotation.formats import read_gold_bytes, read_gold_file
from annotation.models import GoldCheckJob, GoldFlag, GoldStatus, GoldTrajectory
from annotation.services.gold_checks import FIT_KINDS, run_gold_check, start_gold_check
from annotation.services.gold_import import import_gold
from tests.annotation.sheets import excerpt_rows, misplaced_gold_sheet, sheet_bytes
from tests.factories import GoldStepFactory, GoldTrajectoryFactory, TaskFactory


@pytest.fixture(scope="module")
def webarena_intents(shared_data):
    tasks = json.loads((shared_data / "webarena" / "test.raw.json").read_text(encoding="utf-8"))
    return [quality.TaskRecord(task["task_id"], str(task["task_id"]), task["intent"], task["intent_template_id"],
                               quality.template_slots(task["instantiation_dict"]))
            for task in tasks]


def _records(parsed) -> list[quality.GoldRecord]:
    return [quality.GoldRecord(position, int(block.task_id), tuple(step.text for step in block.steps))
            for position, block in enumerate(parsed.blocks)]


def _found(findings) -> set[tuple]:
    return {(finding.gold_pk, finding.kind, finding.key) for finding in findings}


def test_the_real_excerpt_only_shows_its_real_duplicate(webarena_intents, gold_xlsx):
    # Tasks 1 and 2 of the published sheet carry the very same six steps.
    findings = quality.check_gold(webarena_intents, _records(read_gold_file(gold_xlsx)))

    assert _found(findings) == {(1, "duplicate", "gold:2"), (2, "duplicate", "gold:1")}


def test_a_moved_block_and_a_gold_copied_under_a_sibling_are_found(webarena_intents, gold_xlsx):
    parsed = read_gold_bytes(sheet_bytes(misplaced_gold_sheet(excerpt_rows(gold_xlsx))), "xlsx", name="x.xlsx")
    golds = _records(parsed)
    moved, copied = golds[-2], golds[-1]
    assert (moved.task_pk, copied.task_pk) == (811, 83)

    findings = {(f.gold_pk, f.kind): f for f in quality.check_gold(webarena_intents, golds)}

    assert findings[moved.pk, "other_task"].related_task_pk == 529
    assert findings[moved.pk, "other_task"].message.startswith("fits task 529 better than its own task 811: word fit")
    assert "‘bluetooth’, ‘speaker’" in findings[moved.pk, "other_task"].message
    # Task 75 names the same three places, but 82 is the sibling whose places the copy types.
    assert findings[copied.pk, "sibling_values"].related_task_pk == 82
    assert (copied.pk, "other_task") not in findings
    assert findings[copied.pk, "duplicate"].message == "the same 9 steps are stored under task 82 (gold #4)"
    assert (4, "duplicate") in findings and (moved.pk, "duplicate") not in findings  # moved, not copied


# One hand-built case of each kind the fit checks must find, against the 812 real intents.

MAP_GOLD = ("Click on the 'Find directions between two points'",
            "Type 'Massachusetts Institute of Technology' into the 'From' textbox.",
            "Type 'Harvard University' into the 'To' textbox.", "Select the 'Foot (OSRM)' option",
            "Click the 'Go' button", "Select the 'Car (OSRM)' option",
            "Type 'Boston Logan International Airport' into the 'To' textbox.", "Click the 'Go' button")


def _fit_flags(tasks, golds):
    return [(f.gold_pk, f.kind, f.related_task_pk, f.related_gold_pk, f.message)
            for f in quality.check_gold(tasks, golds) if f.kind in FIT_KINDS]


def test_a_directions_block_between_places_the_intent_never_names_is_the_worse_version(webarena_intents):
    unnamed = quality.GoldRecord(2, 82, ("Click on the 'Find directions between two points'",
                                         "Type 'Quincy Market' into the 'From' textbox.",
                                         "Type 'Jamaica Pond' into the 'To' textbox.", "Click the 'Go' button"))

    [(gold, kind, task, other, message)] = _fit_flags(webarena_intents, [quality.GoldRecord(1, 82, MAP_GOLD), unnamed])

    assert (gold, kind, task, other) == (2, "worse_version", None, 1)
    assert "it types ‘Quincy Market’, ‘Jamaica Pond’, which the intent never names" in message
    assert "‘harvard’" in message  # what the other block has that this one lacks


def test_a_template_siblings_place_typed_is_flagged_naming_that_sibling(webarena_intents):
    # Task 81 walks from Univ of Pittsburgh; this gold walks from task 80's Carnegie Mellon University.
    places = {"Massachusetts Institute of Technology": "Carnegie Mellon University",
              "Harvard University": "starbucks on Craig Street",
              "Boston Logan International Airport": "Pittsburgh International Airport"}
    steps = tuple(next((text.replace(old, new) for old, new in places.items() if old in text), text)
                  for text in MAP_GOLD)

    [(gold, kind, task, _, message)] = _fit_flags(webarena_intents, [quality.GoldRecord(1, 81, steps)])

    assert (kind, task) == ("sibling_values", 80)
    assert message == ("types ‘Carnegie Mellon University’, the place_A of task 80 (same template), "
                       "and never ‘Univ of Pittsburgh’ that its own intent names")
    # The same gold under its own task is fine.
    assert _fit_flags(webarena_intents, [quality.GoldRecord(1, 80, steps)]) == []


def test_a_single_row_clicking_an_unrelated_link_fits_its_task_poorly(webarena_intents):
    [(gold, kind, task, _, message)] = _fit_flags(webarena_intents, [
        quality.GoldRecord(1, 809, ("Click on the 'Contact Us' link",))])

    assert kind == "poor_fit"
    assert message.startswith("fits its own task 809 poorly (word fit 0.0 (no word of it), similarity")
    assert "intents fit its steps better, the closest task" in message


def test_a_block_browsing_furniture_by_price_under_a_review_task_names_the_furniture_task(webarena_intents):
    block = ("Click on the 'Home & Kitchen' link", "Click on the 'Furniture' link", "Click on the 'Price' filter",
             "Click on the '$100.00 - $199.99' link")

    [(gold, kind, task, _, message)] = _fit_flags(webarena_intents, [quality.GoldRecord(1, 775, block)])

    # Task 273: "Show me products under $199 in "furtiture with accent" category".
    assert (kind, task) == ("other_task", 273)
    assert "word fit 6.7 (‘199.99’)" in message  # $199.99 counted once, by its rarest part


def test_fit_flags_carry_a_confidence_the_surer_the_higher(webarena_intents, gold_xlsx):
    golds = _records(read_gold_file(gold_xlsx))
    # Under tasks without a gold of their own: the whole refund message under a bestseller question, and a
    # link that a refund message would need but that is clicked under another task.
    moved = [quality.GoldRecord(100, 4, golds[-1].steps),
             quality.GoldRecord(101, 6, golds[-1].steps[:1] + ("Click on the 'Contact Us' link",))]

    confidence = {f.gold_pk: f.confidence for f in quality.check_gold(webarena_intents, golds + moved)
                  if f.kind in FIT_KINDS}

    assert set(confidence) == {100, 101}
    assert 0.5 < confidence[101] < confidence[100] <= 1.0


def test_lengths_one_step_golds_and_missing_intent_values():
    tasks = {pk: quality.TaskRecord(pk, str(pk), 'Create an issue titled "404 for many URLs"', 5) for pk in (1, 2, 3)}
    steps = ("Click 'Issues'", "Click 'New issue'", "Type '404 for many URLs' into 'Title'", "Click 'Create'")
    golds = [quality.GoldRecord(1, 1, steps), quality.GoldRecord(2, 2, steps + ("Scroll down",)),
             quality.GoldRecord(3, 3, steps), quality.GoldRecord(4, 1, steps[:1]),
             quality.GoldRecord(5, 2, steps * 3), quality.GoldRecord(6, 3, (), cannot_complete=True)]

    found = {(f.gold_pk, f.kind) for f in quality.check_gold(list(tasks.values()), golds)}

    assert {(4, "one_step"), (4, "too_short"), (4, "missing_values"), (5, "too_long")} <= found
    assert not {kind for pk, kind in found if pk in (1, 3, 6)} - {"duplicate"}


def _length_flags(n: int, peer_lengths: tuple[int, ...]) -> list[tuple[str, str]]:
    """The length flags of a gold of `n` steps among golds of the same task of `peer_lengths` steps."""
    task = quality.TaskRecord(1, "1", "Open the reports")
    golds = [quality.GoldRecord(100, 1, tuple(f"Click '{i}'" for i in range(n)))]
    golds += [quality.GoldRecord(pk, 1, tuple(f"Select '{i}'" for i in range(length)))
              for pk, length in enumerate(peer_lengths, start=1)]
    return [(f.kind, f.message) for f in quality.check_lengths({1: task}, golds)
            if f.gold_pk == 100 and f.kind != "one_step"]


@pytest.mark.parametrize(("n", "peers", "expected"), [
    # Too short: under half the peers' median AND at least 3 steps fewer.
    (2, (5, 5, 5), [("too_short", "2 steps where the task's other golds and its template siblings' have 5 "
                                  "(median of 3)")]),  # 2 < 5/2 and 5 - 2 = 3
    (1, (3, 3, 3), []),  # 1 < 3/2, but only 2 fewer
    (3, (6, 6, 6), []),  # 3 fewer, but 3 is not under 6/2
    (3, (7, 7, 7), [("too_short", "3 steps where the task's other golds and its template siblings' have 7 "
                                  "(median of 3)")]),  # 3 < 3.5 and 4 fewer
    # Too long: over twice the median AND at least 4 steps more.
    (7, (3, 3, 3), [("too_long", "7 steps where the task's other golds and its template siblings' have 3 "
                                 "(median of 3)")]),  # 7 > 6 and 7 - 3 = 4
    (5, (2, 2, 2), []),  # 5 > 4, but only 3 more
    (8, (4, 4, 4), []),  # 4 more, but 8 is not over 2 * 4
    # The median, not the mean: peers of 1, 6 and 6 steps have a median of 6 (mean 4.33, under which 2 is
    # not under half, 4.33 - 2 < 3).
    (2, (1, 6, 6), [("too_short", "2 steps where the task's other golds and its template siblings' have 6 "
                                  "(median of 3)")]),
    # Fewer than three peers: no length is judged.
    (1, (5, 5), []),
    (20, (2, 2), []),
])
def test_a_gold_is_too_short_or_too_long_only_past_both_the_ratio_and_the_margin(n, peers, expected):
    assert _length_flags(n, peers) == expected


def test_only_golds_of_two_steps_or_more_are_duplicates():
    tasks = {pk: quality.TaskRecord(pk, str(pk), f"intent {pk}") for pk in (1, 2, 3, 4)}
    # One step ("Click 'Reports'") in common says little: two tasks often start alike.
    one_step = [quality.GoldRecord(1, 1, ("Click 'Reports'",)), quality.GoldRecord(2, 2, ("click 'reports'.",))]
    two_steps = [quality.GoldRecord(3, 3, ("Click 'Reports'", "Click 'Sales'")),
                 quality.GoldRecord(4, 4, ("click  'Reports'", "Click 'Sales'."))]  # case, spaces, end stop

    assert quality.check_duplicates(tasks, one_step) == []
    assert [(f.gold_pk, f.related_gold_pk) for f in quality.check_duplicates(tasks, two_steps)] == [(3, 4), (4, 3)]


def test_words_lose_a_suffix_only_when_four_letters_remain():
    # tests -> test (4 letters left), reports -> report; bits and uses keep theirs (3 and 2 would remain);
    # "was" is a stop word, "go" too short.
    assert quality.terms("tests bits reports uses was go") == {
        "test": "tests", "bits": "bits", "report": "reports", "uses": "uses"}
    # The docstring's example: "bestsellers" and "best-selling" share the term "bestsell" (the first word
    # keeps it); "selling" -> "sell" with exactly four letters left.
    assert quality.terms("bestsellers best-selling") == {
        "bestsell": "bestsellers", "best-selling": "best-selling", "best": "best-selling", "sell": "best-selling"}


# The job, the page, the actions -----------------------------------------------------------------


@pytest.fixture
def misplaced_import(db, webarena_tasks, gold_xlsx, django_capture_on_commit_callbacks):
    parsed = read_gold_bytes(sheet_bytes(misplaced_gold_sheet(excerpt_rows(gold_xlsx))), "xlsx", name="gold.xlsx")
    with django_capture_on_commit_callbacks(execute=True):
        import_gold(parsed, file_name="gold.xlsx", annotator="paper", create_annotator=True)
    return {gold.task.task_id: gold for gold in GoldTrajectory.objects.select_related("task").order_by("-pk")}


def _open(kind: str) -> set[str]:
    flags = GoldFlag.objects.filter(kind=kind, active=True, dismissed_at__isnull=True).select_related("gold__task")
    return {flag.gold.task.task_id for flag in flags}


def test_an_import_runs_the_checks_in_the_background(misplaced_import):
    job = GoldCheckJob.objects.get(kind="quality")

    assert (job.status, job.benchmark, job.done, job.total) == ("done", "webarena", 9, 9)
    assert (job.result["flags"]["other_task"], job.result["flags"]["sibling_values"]) == (1, 1)
    assert _open("other_task") == {"811"} and _open("sibling_values") == {"83"}
    assert GoldFlag.objects.get(kind="other_task").confidence > 0.9
    assert _open("duplicate") == {"1", "2", "82", "83"}


def test_a_later_job_in_a_fresh_process_reads_the_vectors_it_needs(misplaced_import, monkeypatch):
    from annotation.models import SentenceVector
    from trajectories.models import Task

    gists = {quality.gold_gist(tuple(gold.steps.values_list("text", flat=True)))
             for gold in GoldTrajectory.objects.all()}
    assert SentenceVector.objects.count() == len(set(Task.objects.values_list("intent", flat=True)) | gists)
    monkeypatch.setattr("judges.embeddings.sentence_encoder", lambda: 1 / 0)  # no model to load

    job = run_gold_check(start_gold_check(GoldCheckJob.Kind.QUALITY, benchmark="webarena").pk)

    assert job.status == "done" and _open("other_task") == {"811"}


def test_a_dismissed_flag_stays_dismissed_and_a_fixed_one_goes_inactive(misplaced_import, reviewer):
    from annotation.services.gold_checks import dismiss_flag

    flag = GoldFlag.objects.get(kind="duplicate", gold__task__task_id="1")
    dismiss_flag(flag.pk, user=reviewer, reason="tasks 1 and 2 really share their steps")
    GoldStepFactory(gold=misplaced_import["83"], index=10, text="Click the 'Go' button")  # no longer a copy

    run_gold_check(start_gold_check(GoldCheckJob.Kind.QUALITY, benchmark="webarena").pk)

    flag.refresh_from_db()
    assert (flag.dismiss_reason, flag.active) == ("tasks 1 and 2 really share their steps", True)
    assert _open("duplicate") == {"2"}
    assert not GoldFlag.objects.get(kind="duplicate", gold__task__task_id="83").active


def test_the_quality_page_lists_flags_with_their_actions(misplaced_import, reviewer, client,
                                                         django_capture_on_commit_callbacks):
    client.force_login(reviewer)
    html = client.get(reverse("annotation:quality"), {"benchmark": "webarena"}).content.decode()

    assert "Belongs to another task (1)" in html and "Duplicate of another task&#x27;s gold (4)" in html
    assert "Types a template sibling&#x27;s values (1)" in html
    moved = misplaced_import["811"]
    assert f'href="/annotation/gold/{moved.pk}/"' in html and "fits task 529 better" in html
    flag = GoldFlag.objects.get(kind="other_task", gold=moved)

    refused = client.post(reverse("annotation:dismiss-flag", args=[flag.pk]), {"reason": " "}, follow=True)
    assert "say why this flag is not a problem" in refused.content.decode()
    client.post(reverse("annotation:dismiss-flag", args=[flag.pk]), {"reason": "checked by hand"})
    client.post(reverse("annotation:review", args=[moved.pk]),
                {"decision": "changes_requested", "comment": "belongs to task 529", "version": moved.version,
                 "next": reverse("annotation:quality")})
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(reverse("annotation:quality"), {"benchmark": "webarena"}).status_code == 302

    moved.refresh_from_db()
    assert moved.status == GoldStatus.CHANGES_REQUESTED and not moved.is_reference
    flag.refresh_from_db()
    assert flag.dismiss_reason == "checked by hand"
    assert GoldCheckJob.objects.filter(kind="quality").count() == 2


def test_the_quality_page_is_for_reviewers(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("annotation:quality")).status_code == 403


def test_a_failing_job_says_why(db, monkeypatch):
    job = GoldCheckJob.objects.create(kind="quality", benchmark="webarena")
    monkeypatch.setattr(quality, "check_gold", lambda *args, **kwargs: 1 / 0)

    run_gold_check(job.pk)

    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "ZeroDivisionError: division by zero")


def test_set_as_reference_from_the_review_page(db, reviewer, client):
    task = TaskFactory()
    first = GoldTrajectoryFactory(task=task, status="approved")
    second = GoldTrajectoryFactory(task=task, status="approved")
    assert GoldTrajectory.objects.get(is_reference=True) == first
    client.force_login(reviewer)

    assert "Set as reference gold" in client.get(reverse("annotation:gold", args=[second.pk])).content.decode()
    client.post(reverse("annotation:set-reference", args=[second.pk]))

    assert GoldTrajectory.objects.get(is_reference=True) == second
    assert "reference gold of this task" in client.get(reverse("annotation:gold", args=[second.pk])).content.decode()


def test_check_jobs_are_background_jobs_the_sweeper_sends_again(db):
    from infrastructure import jobs

    assert GoldCheckJob in jobs.job_models()
    job = GoldCheckJob.objects.create(kind="quality", benchmark="webarena", status="running")

    jobs.dispatch_now(job)  # what the sweeper does with a job whose message was lost

    job.refresh_from_db()
    assert job.status == "done"


def test_copies_of_one_gold_under_many_tasks_give_one_flag_each():
    tasks = {pk: quality.TaskRecord(pk, str(pk), f"intent {pk}") for pk in (1, 2, 3)}
    steps = ("Click on 'Reports'", "Click on 'Sales'")
    golds = [quality.GoldRecord(10 + pk, pk, steps) for pk in (1, 2, 3)]
    findings = quality.check_duplicates(tasks, golds)
    assert [(finding.gold_pk, finding.kind) for finding in findings] == [(11, "duplicate"), (12, "duplicate"),
                                                                         (13, "duplicate")]
    assert findings[0].message == "the same 2 steps are stored under task 2 (gold #12) and 1 other task"


def test_the_page_and_the_api_give_the_surest_flags_first(db, reviewer, client):
    from rest_framework.test import APIClient

    unsure, sure = TaskFactory(intent="Show me the <b>blue</b> kettle"), TaskFactory(intent="Show me the red teapot")
    flags = [GoldFlag.objects.create(gold=GoldTrajectoryFactory(task=task, status="submitted"), kind="poor_fit",
                                     message=f"fits its own task {task.task_id} poorly", confidence=confidence,
                                     related_task=sure)
             for task, confidence in ((unsure, 0.55), (sure, 0.97))]
    GoldStepFactory(gold=flags[0].gold, index=1, text="Click on the '<script>alert(1)</script>' link")
    client.force_login(reviewer)

    html = client.get(reverse("annotation:quality"), {"benchmark": "webarena"}).content.decode()

    assert html.index(f'id="flag-{flags[1].pk}"') < html.index(f'id="flag-{flags[0].pk}"')
    assert "97% sure" in html and "55% sure" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    assert "Show me the &lt;b&gt;blue&lt;/b&gt; kettle" in html and "Closest task" in html
    api = APIClient()
    api.force_authenticate(reviewer)
    listed = api.get("/api/gold/quality/", {"benchmark": "webarena"}).data["flags"]
    assert [(flag["id"], flag["confidence"]) for flag in listed] == [(flags[1].pk, 0.97), (flags[0].pk, 0.55)]
