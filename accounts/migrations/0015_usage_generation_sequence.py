"""On PostgreSQL, the quota counters' generations are drawn from a sequence
(accounts/quota.py, ``unused_generation``): a seeding whose commit failed after it set its
counter in Redis must not see its generation handed out again. It starts past every
generation recorded so far."""

from django.db import migrations

from core.infra import sequences

SEQUENCE = "accounts_usage_generation"


def create(apps, schema_editor):
    sequences.create(schema_editor, SEQUENCE,
                     past="SELECT max(generation) FROM accounts_usageshard")


def drop(apps, schema_editor):
    sequences.drop(schema_editor, SEQUENCE)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0014_usage_shard_generation")]

    operations = [migrations.RunPython(create, drop)]
