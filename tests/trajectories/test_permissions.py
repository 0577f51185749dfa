"""Who may add trajectories to a run (`trajectories.permissions`)."""

import pytest
from django.contrib.auth.models import AnonymousUser

from accounts.roles import ADMIN, REVIEWER
from tests.annotation.test_permissions import _fast_password_hashing, user  # noqa: F401 - a fixture
from tests.factories import AgentRunFactory
from trajectories.permissions import can_import_into

pytestmark = pytest.mark.django_db


def test_only_the_uploader_or_an_admin_imports_into_a_run():
    ann, rita, adam = user("ann"), user("rita", REVIEWER), user("adam", ADMIN)
    anns, from_the_command_line = AgentRunFactory(uploaded_by=ann), AgentRunFactory(uploaded_by=None)

    assert can_import_into(ann, anns) and not can_import_into(rita, anns) and can_import_into(adam, anns)
    assert not can_import_into(ann, from_the_command_line) and can_import_into(adam, from_the_command_line)
    assert not can_import_into(AnonymousUser(), anns) and not can_import_into(AnonymousUser(), from_the_command_line)
