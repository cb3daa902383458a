"""Forms made before owner notifications existed keep them off (contract, "Upgrades change no
behaviour by themselves").

1.1.0's migrations gave every existing form ``notify_owner`` on and an enabled OWNER_EMAIL
integration, so an upgrade mailed the owners of old forms without asking. The moment owner
notifications arrived is when ``forms_app.0009_form_notify_owner`` was applied (its row in
``django_migrations``). A form is put back to off when it was created before that moment and
nobody has saved it since (``updated_at`` is before it too): its setting is the one the
upgrade chose, never one an owner chose or saw change. A form saved since keeps what it has,
since the owner may have turned it on on purpose; a form created since keeps the default (on).

Upgrading from 1.0.0 straight to this release, every form was created before that moment and
none saved since, so every existing form is off.
"""

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder

NOTIFICATIONS_ARRIVED = ("forms_app", "0009_form_notify_owner")


def arrival(connection):
    """When owner notifications arrived here, or None on a database that never ran it."""
    recorder = MigrationRecorder(connection)
    app, name = NOTIFICATIONS_ARRIVED
    row = recorder.migration_qs.filter(app=app, name=name).first()
    return row.applied if row else None


def older_forms_keep_owner_email_off(apps, schema_editor):
    arrived = arrival(schema_editor.connection)
    if arrived is None:
        return
    Form = apps.get_model("forms_app", "Form")
    Integration = apps.get_model("integrations", "Integration")
    untouched = Form.objects.filter(created_at__lt=arrived, updated_at__lt=arrived,
                                    notify_owner=True)
    ids = list(untouched.values_list("pk", flat=True))
    # Batches keep each statement's parameter list short (SQLite allows 999 in old builds).
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        # update() leaves updated_at alone: the form still reads as never touched by its owner.
        Form.objects.filter(pk__in=batch).update(notify_owner=False)
        Integration.objects.filter(form_id__in=batch, type="OWNER_EMAIL").update(enabled=False)


class Migration(migrations.Migration):

    dependencies = [
        ("forms_app", "0009_form_notify_owner"),
        ("integrations", "0008_event_subscriptions"),
    ]

    operations = [
        migrations.RunPython(older_forms_keep_owner_email_off, migrations.RunPython.noop),
    ]
