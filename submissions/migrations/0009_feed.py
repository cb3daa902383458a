"""The feed's positions (submissions/feed.py): every row there is placed now, in the order of
its stamps, and the folder counts start again from their rows (their checkpoints were times).

Non-atomic, so the indexes are built without stopping writes on PostgreSQL; the placing runs in
a transaction of its own. On a large table it rewrites every row once: run it in a quiet hour.
"""

from datetime import UTC, datetime

from django.db import migrations, models, transaction

from core.infra.migration_ops import AddIndexOnline

BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)


def place_every_row(apps, schema_editor):
    Submission = apps.get_model("submissions", "Submission")
    FeedState = apps.get_model("submissions", "FeedState")
    FolderCount = apps.get_model("submissions", "FolderCount")
    table = Submission._meta.db_table
    with transaction.atomic(using=schema_editor.connection.alias):
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} AS s SET position = n.position "
                f"FROM (SELECT id, row_number() OVER (ORDER BY submitted_at, id) AS position "
                f"      FROM {table}) AS n WHERE s.id = n.id"
            )
        newest = Submission.objects.aggregate(newest=models.Max("submitted_at"))["newest"]
        FeedState.objects.update_or_create(pk=1, defaults={
            "last_position": Submission.objects.count(), "newest": newest or BEGINNING})
        FolderCount.objects.update(count=0, counted_upto=None, counted_before=None)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("submissions", "0008_sqlite_stamp_order"),
    ]

    operations = [
        migrations.CreateModel(
            name="FeedState",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                           verbose_name="ID")),
                ("last_position", models.BigIntegerField(default=0)),
                ("newest", models.DateTimeField()),
            ],
        ),
        migrations.AddField(
            model_name="foldercount",
            name="counted_upto",
            field=models.BigIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="submission",
            name="position",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(place_every_row, migrations.RunPython.noop),
        AddIndexOnline(
            model_name="submission",
            index=models.Index(condition=models.Q(("position__isnull", False),
                                                  ("status", "inbox")),
                               fields=["form", "submitted_at", "position"],
                               name="submission_feed"),
        ),
        AddIndexOnline(
            model_name="submission",
            index=models.Index(condition=models.Q(("position__isnull", True)),
                               fields=["submitted_at", "id"], name="submission_unplaced"),
        ),
    ]
