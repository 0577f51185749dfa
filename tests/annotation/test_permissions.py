"""Who may see and change which gold (`annotation.permissions`), asked directly for each role and status."""

import pytest
from django.contrib.auth.models import AnonymousUser, Group

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER
from annotation.models import GoldTrajectory
from annotation.permissions import (can_edit_gold, can_review_gold, can_submit_gold, can_view_gold,
                                    may_approve_gold_of, visible_gold)
from tests.factories import GoldTrajectoryFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def user(name, *roles):
    made = UserFactory(username=name)
    made.groups.add(*(Group.objects.get_or_create(name=role)[0] for role in roles))
    return made


def gold(task, annotator, status, **fields):
    return GoldTrajectoryFactory(task=task, annotator=annotator, status=status, reference=False, **fields)


@pytest.fixture
def golds():
    """Ann has submitted gold for task 1 and a draft for task 2; Bob's gold for both in every state."""
    ann, bob = user("ann", ANNOTATOR), user("bob", ANNOTATOR)
    one, two = TaskFactory(task_id="1"), TaskFactory(task_id="2")
    return {
        "ann": ann, "bob": bob,
        "ann 1 submitted": gold(one, ann, "submitted"), "ann 2 draft": gold(two, ann, "draft"),
        "bob 1 draft": gold(one, bob, "draft"), "bob 1 submitted": gold(one, bob, "submitted"),
        "bob 1 approved": gold(one, bob, "approved"), "bob 1 changes": gold(one, bob, "changes_requested"),
        "bob 2 submitted": gold(two, bob, "submitted"), "bob 2 approved": gold(two, bob, "approved"),
    }


def _visible(person, golds) -> set[str]:
    pks = set(visible_gold(person).values_list("pk", flat=True))
    return {name for name, made in golds.items() if isinstance(made, GoldTrajectory) and made.pk in pks}


ALL = {"ann 1 submitted", "ann 2 draft", "bob 1 draft", "bob 1 submitted", "bob 1 approved", "bob 1 changes",
       "bob 2 submitted", "bob 2 approved"}


def test_gold_is_blind_until_one_has_submitted_ones_own_for_the_task(golds):
    # Ann: all her own; others' submitted and approved gold of task 1 only, where hers is submitted.
    assert _visible(golds["ann"], golds) == {"ann 1 submitted", "ann 2 draft", "bob 1 submitted", "bob 1 approved"}
    assert _visible(user("rita", REVIEWER), golds) == ALL
    assert _visible(user("adam", ADMIN), golds) == ALL
    assert _visible(user("nora"), golds) == {"bob 1 approved", "bob 2 approved"}  # an account without a role
    assert _visible(AnonymousUser(), golds) == set()
    # Within a queryset given: narrowed, never widened.
    assert set(visible_gold(golds["ann"], GoldTrajectory.objects.filter(task__task_id="2"))) == {golds["ann 2 draft"]}
    assert can_view_gold(golds["ann"], golds["bob 1 submitted"]) and not can_view_gold(golds["ann"],
                                                                                     golds["bob 2 submitted"])


def test_the_owner_edits_a_draft_or_gold_sent_back_and_submits_only_their_own(golds):
    ann, bob = golds["ann"], golds["bob"]
    assert [name for name in ("bob 1 draft", "bob 1 changes", "bob 1 submitted", "bob 1 approved")
            if can_edit_gold(bob, golds[name])] == ["bob 1 draft", "bob 1 changes"]
    assert not can_edit_gold(ann, golds["bob 1 draft"])
    assert can_submit_gold(bob, golds["bob 1 draft"]) and not can_submit_gold(ann, golds["bob 1 draft"])
    # The owner without the annotator role (taken away later) edits and submits nothing.
    bob.groups.clear()
    assert not can_edit_gold(bob, golds["bob 1 draft"]) and not can_submit_gold(bob, golds["bob 1 draft"])


def test_reviewers_edit_and_approve_others_gold_and_only_admins_their_own():
    rita, adam = user("rita", REVIEWER), user("adam", ADMIN)
    ann = user("ann", ANNOTATOR)
    task = TaskFactory(task_id="1")
    anns, ritas, adams = gold(task, ann, "submitted"), gold(task, rita, "approved"), gold(task, adam, "approved")

    assert can_edit_gold(rita, anns) and may_approve_gold_of(rita, ann.pk) and can_review_gold(rita, anns)
    # Her own approved gold: the owner's rule (not editable once approved), and no approving it herself.
    assert not can_edit_gold(rita, ritas) and not may_approve_gold_of(rita, rita.pk)
    assert not can_review_gold(rita, ritas)
    assert can_edit_gold(adam, adams) and may_approve_gold_of(adam, adam.pk) and can_review_gold(adam, adams)
    # An annotator approves nothing; gold without an annotator is another's for a reviewer.
    assert not may_approve_gold_of(ann, None) and not may_approve_gold_of(ann, rita.pk)
    assert may_approve_gold_of(rita, None)


def test_nobody_but_an_admin_reviews_gold_they_imported_on_someones_behalf():
    rita, adam, ann = user("rita", REVIEWER), user("adam", ADMIN), user("ann", ANNOTATOR)
    task = TaskFactory(task_id="1")
    imported_by_rita = gold(task, ann, "submitted", imported_by=rita)
    imported_by_adam = gold(task, ann, "submitted", imported_by=adam)

    assert not can_review_gold(rita, imported_by_rita) and can_review_gold(rita, imported_by_adam)
    assert can_review_gold(adam, imported_by_adam)
