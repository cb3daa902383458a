from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0013_code_askers"),
    ]

    operations = [
        migrations.AddField(
            model_name="usageshard",
            name="generation",
            field=models.BigIntegerField(default=0, db_default=0),
        ),
    ]
