from django.db import migrations


def backfill(apps, schema_editor):
    """Each form's field names in order of first appearance, from the submissions it has."""
    Form = apps.get_model("forms_app", "Form")
    Submission = apps.get_model("submissions", "Submission")
    for form in Form.objects.only("pk").iterator():
        names, seen = [], set()
        rows = (
            Submission.objects.filter(form_id=form.pk)
            .order_by("submitted_at", "id")
            .values_list("data", flat=True)
        )
        for data in rows.iterator(chunk_size=2000):
            for name, _value in data:
                if name not in seen:
                    seen.add(name)
                    names.append(name)
        if names:
            Form.objects.filter(pk=form.pk).update(field_names=names)


class Migration(migrations.Migration):
    dependencies = [
        ("forms_app", "0003_form_field_names"),
        ("submissions", "0001_initial"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
