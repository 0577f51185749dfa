import pytest
from django.contrib import admin
from django.urls import reverse

from tests import factories
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PROJECT_APPS = {"accounts", "trajectories", "annotation", "judges", "metrics"}


def test_every_model_of_the_project_is_in_the_admin():
    from django.apps import apps

    models = [m for app in PROJECT_APPS for m in apps.get_app_config(app).get_models()]
    missing = [m.__name__ for m in models if m not in admin.site._registry]
    assert not missing


def test_admin_lists_and_change_pages_render(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    score = factories.TrajectoryScoreFactory()
    factories.StepFactory(trajectory=score.trajectory)
    factories.GoldStepFactory()
    factories.JudgeDecisionFactory()
    for model in admin.site._registry:
        if model._meta.app_label not in PROJECT_APPS:
            continue
        info = (model._meta.app_label, model._meta.model_name)
        assert client.get(reverse("admin:%s_%s_changelist" % info)).status_code == 200, info
        obj = model.objects.first()
        if obj is not None:
            assert client.get(reverse("admin:%s_%s_change" % info, args=[obj.pk])).status_code == 200, info
