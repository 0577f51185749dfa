"""Databases made before the accounts app end up like fresh ones: role groups, hashed tokens."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import Group
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.roles import ROLES
from tests.factories import UserFactory

role_groups = importlib.import_module("accounts.migrations.0002_role_groups")


@pytest.mark.django_db
def test_the_role_groups_migration_makes_missing_groups_only():
    Group.objects.filter(name=ROLES[0]).delete()
    kept = Group.objects.get(name=ROLES[1])
    role_groups.create_role_groups(apps, None)
    assert set(Group.objects.values_list("name", flat=True)) >= set(ROLES)
    assert Group.objects.get(name=ROLES[1]).pk == kept.pk


@pytest.mark.django_db(transaction=True)
def test_plain_text_tokens_of_an_old_database_are_hashed_and_keep_working():
    user = UserFactory(username="old-client")
    executor = MigrationExecutor(connection)
    executor.migrate([("accounts", "0002_role_groups")])
    key = "0123456789abcdef0123456789abcdef01234567"  # DRF's 40-character tokens, as stored before
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, user_id integer)")
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s)", [key, user.pk])
    executor = MigrationExecutor(connection)
    executor.migrate([("accounts", "0003_hash_plaintext_tokens")])

    assert "authtoken_token" not in connection.introspection.table_names()
    token = ApiToken.objects.get(user=user)
    assert token.digest != key and token.expiry is not None
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/tasks/").status_code == 200
