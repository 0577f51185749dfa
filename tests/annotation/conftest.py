import pytest
from django.contrib.auth.models import Group

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER
from tests.factories import UserFactory
from trajectories.services.tasks import import_task_file

GOLD_XLSX = "gold-sample/golden_human_trajectories_excerpt.xlsx"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def webarena_tasks(db, shared_data):
    """The 812 real WebArena tasks."""
    import_task_file(shared_data / "webarena" / "test.raw.json")


@pytest.fixture
def gold_xlsx(shared_data):
    return shared_data / GOLD_XLSX


def _member(role: str, username: str):
    user = UserFactory(username=username)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


@pytest.fixture
def annotator(db):
    return _member(ANNOTATOR, "alice")


@pytest.fixture
def other_annotator(db):
    return _member(ANNOTATOR, "bob")


@pytest.fixture
def reviewer(db):
    return _member(REVIEWER, "rita")


@pytest.fixture
def admin_user(db):
    return _member(ADMIN, "adam")
