"""Integrations remember until when their deliveries go by the slow lane (a destination that
keeps timing out slows only itself). Empty for every existing integration: none starts in it."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('integrations', '0009_owner_email_off_for_older_forms'),
    ]

    operations = [
        migrations.AddField(
            model_name='integration',
            name='slow_until',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
