"""Events beyond submission.created, and REST hook subscriptions (contract, "Event
subscriptions and erasure"). Existing webhooks keep receiving what they did: their config
now says so."""

import django.db.models.deletion
from django.db import migrations, models


def webhooks_say_their_events(apps, schema_editor):
    Integration = apps.get_model("integrations", "Integration")
    for integration in Integration.objects.filter(type="WEBHOOK").only("config"):
        if "events" not in integration.config:
            config = {**integration.config, "events": ["submission.created"]}
            Integration.objects.filter(pk=integration.pk).update(config=config)


class Migration(migrations.Migration):

    dependencies = [
        ('integrations', '0007_owner_notifications'),
        ('pullapi', '0002_api_key_scopes'),
    ]

    operations = [
        migrations.AddField(
            model_name='delivery',
            name='payload',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='integration',
            name='api_key',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='hooks', to='pullapi.apikey'),
        ),
        migrations.AddField(
            model_name='integration',
            name='events',
            field=models.CharField(default='submission.created', db_default='submission.created', max_length=200),
        ),
        migrations.AddField(
            model_name='integration',
            name='hook',
            field=models.BooleanField(default=False, db_default=False),
        ),
        migrations.RunPython(webhooks_say_their_events, migrations.RunPython.noop),
    ]
