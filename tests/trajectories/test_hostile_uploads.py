"""Hostile uploads fail one file, never the request (and never leave files or empty runs behind)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=UserFactory()).key}")
    return client


def test_too_many_files_in_one_api_request_answer_json(api, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    files = [SimpleUploadedFile(f"render_{n}.html", b"<html></html>") for n in range(4)]
    response = api.post(reverse("api-run-import"), {"run": "many", "files": files}, format="multipart")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "too_many_files" and "3" in response.json()["detail"]


def test_a_json_body_over_the_size_limit_answers_json(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = api.post(reverse("api-run-import"), {"run": "big", "trajectories": [{"x": "y" * 200}]}, format="json")
    assert response.status_code == 413 and response.json()["code"] == "request_too_large"
