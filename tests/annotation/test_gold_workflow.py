"""Recording, optimistic locking, submission, review and blind visibility of gold."""

import pytest
from django.contrib.auth.models import Group

from accounts.roles import ADMIN, REVIEWER
from annotation.content import GoldContent
from annotation.errors import (
    GoldConflict,
    GoldPermissionDenied,
    GoldValidationError,
    GoldWorkflowError,
    RequirementsConflict,
)
from annotation.gold_records import GoldStepRecord
from annotation.models import GoldReview, GoldStatus
from annotation.permissions import visible_gold
from annotation.services.gold_editing import create_gold, edit_gold_steps, save_gold, submit_gold
from annotation.services.gold_review import review_gold
from annotation.services.requirements import update_requirements
from tests.factories import GoldStepFactory, GoldTrajectoryFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


def _content(*texts: str, **extra) -> GoldContent:
    return GoldContent(steps=[GoldStepRecord(text=text) for text in texts], **extra)


def _texts(gold) -> list[str]:
    return [step.text for step in gold.steps.all()]


def test_an_annotator_records_a_draft_with_structured_steps(annotator):
    task = TaskFactory()
    content = GoldContent(steps=[
        GoldStepRecord(text="  Click on the 'REPORTS' link  "),
        GoldStepRecord(text="", action_type="type", element_role="textbox", element_name="To",
                       value="Harvard University"),
    ])

    gold = create_gold(task, user=annotator, content=content)

    assert (gold.status, gold.version, gold.source, gold.annotator) == ("draft", 1, "web", annotator)
    assert _texts(gold) == ["Click on the 'REPORTS' link", "Type 'Harvard University' into the 'To' textbox"]
    assert gold.steps.get(index=2).element_name == "To"


def test_a_second_create_hands_back_the_existing_gold(annotator):
    task = TaskFactory()
    first = create_gold(task, user=annotator, content=_content("a"))

    with pytest.raises(GoldConflict) as conflict:
        create_gold(task, user=annotator, content=_content("b"))

    assert conflict.value.current.pk == first.pk
    assert _texts(first) == ["a"]


def test_users_without_the_annotator_role_cannot_record_gold():
    with pytest.raises(GoldPermissionDenied):
        create_gold(TaskFactory(), user=UserFactory())


def test_saving_bumps_the_version_and_replaces_the_steps(annotator):
    gold = create_gold(TaskFactory(), user=annotator, content=_content("a", "b"))

    saved = save_gold(gold.pk, user=annotator, version=1, content=_content("b", "c", final_answer="42"))

    assert (saved.version, saved.final_answer, _texts(saved)) == (2, "42", ["b", "c"])


def test_a_stale_save_is_a_conflict_and_changes_nothing(annotator, reviewer):
    gold = create_gold(TaskFactory(), user=annotator, content=_content("original"))
    save_gold(gold.pk, user=annotator, version=1, content=_content("annotator's edit"))

    with pytest.raises(GoldConflict) as conflict:
        save_gold(gold.pk, user=reviewer, version=1, content=_content("reviewer's edit"))

    current = conflict.value.current
    assert (current.version, _texts(current)) == (2, ["annotator's edit"])
    assert "saved by someone else" in str(conflict.value)
    # Saving on top of the version the conflict showed goes through.
    assert _texts(save_gold(gold.pk, user=reviewer, version=2, content=_content("reviewer's edit"))) == [
        "reviewer's edit"
    ]


def test_bad_content_is_refused_with_field_paths(annotator):
    gold = create_gold(TaskFactory(), user=annotator)
    bad = GoldContent(steps=[GoldStepRecord(text="ok"), GoldStepRecord(text=" "),
                             GoldStepRecord(text="x", action_type="fly")])

    with pytest.raises(GoldValidationError) as error:
        save_gold(gold.pk, user=annotator, version=1, content=bad)

    assert set(error.value.errors) == {"steps[1].text", "steps[2].action_type"}
    gold.refresh_from_db()
    assert gold.version == 1


def test_submission_needs_steps_or_a_reason(annotator):
    gold = create_gold(TaskFactory(), user=annotator)

    with pytest.raises(GoldValidationError, match="record at least one step"):
        submit_gold(gold.pk, user=annotator, version=1)
    with pytest.raises(GoldValidationError, match="say why the task cannot be completed"):
        save_gold(gold.pk, user=annotator, version=1, content=GoldContent(cannot_complete=True), submit=True)

    saved = save_gold(gold.pk, user=annotator, version=1, submit=True,
                      content=GoldContent(cannot_complete=True, cannot_complete_reason="The product is gone."))
    assert (saved.status, saved.cannot_complete_reason, saved.submitted_at is not None) == (
        "submitted", "The product is gone.", True
    )


def test_unticking_cannot_complete_drops_the_reason(annotator):
    gold = create_gold(TaskFactory(), user=annotator)
    saved = save_gold(gold.pk, user=annotator, version=1,
                      content=_content("a", cannot_complete=False, cannot_complete_reason="stale"))
    assert saved.cannot_complete_reason == ""


def test_submitted_gold_is_read_only_for_its_annotator_but_not_for_reviewers(annotator, reviewer):
    gold = create_gold(TaskFactory(), user=annotator, content=_content("a"), submit=True)

    with pytest.raises(GoldPermissionDenied):
        save_gold(gold.pk, user=annotator, version=1, content=_content("b"))
    with pytest.raises(GoldWorkflowError, match="only drafts can be submitted"):
        submit_gold(gold.pk, user=annotator, version=1)
    assert _texts(save_gold(gold.pk, user=reviewer, version=1, content=_content("fixed"))) == ["fixed"]


def test_a_reviewers_change_to_someone_elses_gold_is_recorded_in_its_history(annotator, reviewer):
    gold = create_gold(TaskFactory(), user=annotator, content=_content("a"), submit=True)
    save_gold(gold.pk, user=reviewer, version=1, content=_content("fixed"))
    edit_gold_steps(gold.pk, user=reviewer, version=2, change=lambda steps: steps.append(GoldStepRecord(text="more")))
    gold.refresh_from_db()
    assert (gold.status, gold.version) == (GoldStatus.SUBMITTED, 3)
    history = gold.reviews.order_by("pk").values_list("reviewer__username", "decision", "gold_version", "comment")
    assert list(history) == [
        ("rita", "edited", 2, "Changed version 1 into version 2: steps (1 before, 1 after)."),
        ("rita", "edited", 3, "Changed version 2 into version 3: steps (1 before, 2 after)."),
    ]
    # The annotator's own saves, and a reviewer's own gold, leave no such record.
    own = create_gold(TaskFactory(), user=reviewer, content=_content("a"))
    save_gold(own.pk, user=reviewer, version=1, content=_content("b"))
    assert not own.reviews.exists()
    # "Edited" is a record, not a verdict a reviewer can give.
    with pytest.raises(GoldValidationError, match="expected one of approved, changes_requested"):
        review_gold(gold.pk, reviewer=reviewer, version=3, decision="edited")


def test_a_reviewer_who_changed_the_gold_cannot_approve_it_another_reviewer_or_an_admin_does(annotator, reviewer):
    gold = create_gold(TaskFactory(), user=annotator, content=_content("a"), submit=True)
    save_gold(gold.pk, user=reviewer, version=1, content=_content("b", final_answer="$20"))
    assert gold.reviews.get().comment == "Changed version 1 into version 2: steps (1 before, 1 after), final answer."
    with pytest.raises(GoldPermissionDenied, match="another reviewer or an admin approves it"):
        review_gold(gold.pk, reviewer=reviewer, version=2, decision="approved")
    # sending it back stays possible: it approves nothing
    review_gold(gold.pk, reviewer=reviewer, version=2, decision="changes_requested", comment="say why")
    gold.refresh_from_db()
    assert gold.status == GoldStatus.CHANGES_REQUESTED
    other = UserFactory(username="rob")
    other.groups.add(Group.objects.get(name=REVIEWER))
    resubmitted = create_gold(TaskFactory(), user=annotator, content=_content("a"), submit=True)
    edit_gold_steps(resubmitted.pk, user=reviewer, version=1, change=lambda steps: steps.reverse())
    assert review_gold(resubmitted.pk, reviewer=other, version=2, decision="approved").decision == "approved"
    admin = UserFactory(username="adam")
    admin.groups.add(Group.objects.get(name=ADMIN))
    own_change = create_gold(TaskFactory(), user=annotator, content=_content("a"), submit=True)
    save_gold(own_change.pk, user=admin, version=1, content=_content("c"))
    assert review_gold(own_change.pk, reviewer=admin, version=2, decision="approved").decision == "approved"


def test_only_the_annotator_submits(annotator, reviewer):
    gold = create_gold(TaskFactory(), user=annotator, content=_content("a"))
    with pytest.raises(GoldPermissionDenied, match="only the annotator"):
        submit_gold(gold.pk, user=reviewer, version=1)


def test_review_approves_or_sends_back_with_a_comment(annotator, reviewer):
    gold = create_gold(TaskFactory(), user=annotator, content=_content("a"), submit=True)

    with pytest.raises(GoldValidationError, match="a comment that says what should change"):
        review_gold(gold.pk, reviewer=reviewer, version=1, decision="changes_requested")
    review = review_gold(gold.pk, reviewer=reviewer, version=1, decision="changes_requested",
                         comment="Step 1 names the wrong link.")
    gold.refresh_from_db()
    assert (gold.status, gold.version, review.gold_version) == ("changes_requested", 2, 1)

    # The annotator fixes and resubmits; the reviewer approves the new version.
    save_gold(gold.pk, user=annotator, version=2, content=_content("b"), submit=True)
    with pytest.raises(GoldConflict):
        review_gold(gold.pk, reviewer=reviewer, version=2, decision="approved")
    review_gold(gold.pk, reviewer=reviewer, version=3, decision="approved")
    gold.refresh_from_db()
    assert gold.status == GoldStatus.APPROVED
    assert list(gold.reviews.values_list("decision", "gold_version")) == [("approved", 3), ("changes_requested", 1)]


def test_review_rules(annotator, reviewer, admin_user):
    draft = create_gold(TaskFactory(), user=annotator, content=_content("a"))
    with pytest.raises(GoldWorkflowError, match="only submitted gold is reviewed"):
        review_gold(draft.pk, reviewer=reviewer, version=1, decision="approved")
    with pytest.raises(GoldPermissionDenied):
        review_gold(draft.pk, reviewer=annotator, version=1, decision="approved")
    own = create_gold(TaskFactory(), user=reviewer, content=_content("a"), submit=True)
    with pytest.raises(GoldPermissionDenied):
        review_gold(own.pk, reviewer=reviewer, version=1, decision="approved")
    admins_own = create_gold(TaskFactory(), user=admin_user, content=_content("a"), submit=True)
    review_gold(admins_own.pk, reviewer=admin_user, version=1, decision="approved")
    with pytest.raises(GoldValidationError):
        review_gold(own.pk, reviewer=admin_user, version=1, decision="maybe")
    assert GoldReview.objects.count() == 1


def test_annotators_are_blind_to_each_others_gold_until_they_submit(annotator, other_annotator, reviewer):
    task = TaskFactory()
    alices = create_gold(task, user=annotator, content=_content("alice"))
    bobs = create_gold(task, user=other_annotator, content=_content("bob"), submit=True)
    other_task_gold = GoldTrajectoryFactory(status="approved")

    assert set(visible_gold(annotator)) == {alices}
    assert set(visible_gold(reviewer)) == {alices, bobs, other_task_gold}
    assert set(visible_gold(UserFactory())) == {other_task_gold}

    save_gold(alices.pk, user=annotator, version=1, content=_content("alice"), submit=True)
    assert set(visible_gold(annotator)) == {alices, bobs}
    # Bob's drafts for other tasks stay hidden from Alice.
    assert set(visible_gold(other_annotator)) == {alices, bobs}


def test_step_edits_share_the_version_check(annotator):
    gold = create_gold(TaskFactory(), user=annotator, content=_content("a", "b"))

    edited = edit_gold_steps(gold.pk, user=annotator, version=1, change=lambda steps: steps.reverse())

    assert (edited.version, _texts(edited)) == (2, ["b", "a"])
    with pytest.raises(GoldConflict):
        edit_gold_steps(gold.pk, user=annotator, version=1, change=lambda steps: steps.pop())


def test_imported_labels_survive_an_edit(annotator):
    gold = GoldTrajectoryFactory(annotator=annotator)
    GoldStepFactory(gold=gold, index=1, text="Click on the 'My Account' link", source_label="Pink")

    edited = edit_gold_steps(gold.pk, user=annotator, version=1,
                             change=lambda steps: steps.append(GoldStepRecord(text="Scroll down")))

    assert [(s.source_label, s.text) for s in edited.steps.all()] == [
        ("Pink", "Click on the 'My Account' link"), ("", "Scroll down")
    ]


def test_requirements_are_the_annotators_once_edited(annotator):
    task = TaskFactory(requirements=["Quest Lumaflex™ Band", "Sprite"], requirements_source="must_include")

    updated = update_requirements(task.pk, user=annotator, requirements=[" Quest  Lumaflex™ Band", "", "sprite",
                                                                          "Sprite Stasis Ball"],
                                  expected=["Quest Lumaflex™ Band", "Sprite"])

    assert (updated.requirements, updated.requirements_source) == (
        ["Quest Lumaflex™ Band", "sprite", "Sprite Stasis Ball"], "annotator"
    )
    with pytest.raises(RequirementsConflict) as conflict:
        update_requirements(task.pk, user=annotator, requirements=["x"], expected=["Quest Lumaflex™ Band", "Sprite"])
    assert conflict.value.current == ["Quest Lumaflex™ Band", "sprite", "Sprite Stasis Ball"]
    with pytest.raises(GoldPermissionDenied):
        update_requirements(task.pk, user=UserFactory(), requirements=["x"])
