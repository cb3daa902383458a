from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0015_usage_generation_sequence'),
    ]

    operations = [
        migrations.AddField(
            model_name='emailcode',
            name='link_hash',
            field=models.CharField(blank=True, db_default='', db_index=True, default='',
                                   max_length=64),
        ),
        migrations.AddField(
            model_name='emailcode',
            name='link_code_hash',
            field=models.CharField(blank=True, db_default='', default='', max_length=64),
        ),
        # The per-client rules are gone: nothing reads or writes requested_by any more. 1.1.0's
        # code still writes it while this runs (docs/operating.md, "Upgrades"), so only the
        # model forgets it; the column stays, with its default in the database for the rows
        # written without it, until a later release drops it.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name='emailcode', name='requested_by'),
            ],
        ),
    ]
