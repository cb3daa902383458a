"""On PostgreSQL, the quota counters' generations are drawn from a sequence
(accounts/quota.py, ``unused_generation``): a seeding whose commit failed after it set its
counter in Redis must not see its generation handed out again. It starts past every
generation recorded so far."""

from django.db import migrations

SEQUENCE = "accounts_usage_generation"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE} AS bigint")
    schema_editor.execute(
        f"SELECT setval('{SEQUENCE}', COALESCE(max(generation), 0) + 1, false) "
        "FROM accounts_usageshard"
    )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP SEQUENCE IF EXISTS {SEQUENCE}")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0014_usage_shard_generation")]

    operations = [migrations.RunPython(create, drop)]
