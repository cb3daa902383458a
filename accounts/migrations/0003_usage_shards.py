from django.db import migrations, models
import django.db.models.deletion


def move_counts(apps, schema_editor):
    """Each account's count of its current month becomes shard 0 of that month."""
    User = apps.get_model("accounts", "User")
    UsageShard = apps.get_model("accounts", "UsageShard")
    UsageShard.objects.bulk_create(
        UsageShard(user_id=user_id, month=month, shard=0, count=count)
        for user_id, month, count in User.objects.filter(usage_count__gt=0).values_list(
            "pk", "usage_month", "usage_count"
        )
    )


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_mailer_status")]

    operations = [
        migrations.CreateModel(
            name="UsageShard",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("month", models.DateField()),
                ("shard", models.PositiveSmallIntegerField()),
                ("count", models.PositiveIntegerField(default=0)),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="usage_shards", to="accounts.user")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("user", "month", "shard"), name="usage_shard_unique")],
            },
        ),
        migrations.RunPython(move_counts, migrations.RunPython.noop),
        migrations.RemoveField(model_name="user", name="usage_count"),
        migrations.RemoveField(model_name="user", name="usage_month"),
    ]
