"""The role groups, in every database: fresh ones and those made when roles lived in annotation."""

from django.db import migrations


def create_role_groups(apps, schema_editor):
    from accounts.roles import ensure_role_groups

    ensure_role_groups(apps.get_model("auth", "Group"))


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_api_tokens"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_role_groups, migrations.RunPython.noop)]
