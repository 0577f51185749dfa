"""API tokens of databases from before hashing (DRF's `authtoken_token`, kept in plain text)
become hashed tokens that expire after API_TOKEN_TTL_DAYS; the plain-text table is dropped.

Clients keep working with the token they have. Fresh databases have no such table."""

from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone

PLAINTEXT_TABLE = "authtoken_token"


def hash_plaintext_tokens(apps, schema_editor):
    from knox.crypto import hash_token
    from knox.settings import CONSTANTS

    connection = schema_editor.connection
    if PLAINTEXT_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("accounts", "ApiToken")
    expiry = timezone.now() + timedelta(days=settings.API_TOKEN_TTL_DAYS)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id FROM {PLAINTEXT_TABLE}")
        rows = cursor.fetchall()
    ApiToken.objects.bulk_create(
        ApiToken(digest=hash_token(key), token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH], user_id=user_id,
                 expiry=expiry, name="Token from before hashing")
        for key, user_id in rows
    )
    schema_editor.execute(f"DROP TABLE {PLAINTEXT_TABLE}")
    schema_editor.execute("DELETE FROM django_migrations WHERE app = %s", ["authtoken"])


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_role_groups")]

    operations = [migrations.RunPython(hash_plaintext_tokens, migrations.RunPython.noop)]
