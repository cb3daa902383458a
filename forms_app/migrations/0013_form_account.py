from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def count_on_the_owner(apps, schema_editor) -> None:
    """Every form so far is its owner's own: its submissions count on its owner, as before."""
    apps.get_model("forms_app", "Form").objects.update(account=F("owner"))


class Migration(migrations.Migration):

    dependencies = [
        ("forms_app", "0012_form_team"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="form",
            name="account",
            field=models.ForeignKey(
                editable=False, null=True, on_delete=models.deletion.RESTRICT,
                related_name="+", to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunPython(count_on_the_owner, migrations.RunPython.noop),
    ]
