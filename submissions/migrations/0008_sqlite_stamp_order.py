"""On SQLite, a submission's stamp is later than every other in its form's folder.

SQLite's clock has milliseconds: two submissions in one millisecond got the same stamp, and
keyset readers, which order by (stamp, id), put them in the order of their random ids. A
cursor handed out after the first could then pass the second, committed just after it.
SQLite writes one transaction at a time, so a trigger that moves a new stamp to one
microsecond past the folder's latest (when it is not already past it) makes stamps follow
commit order. One trigger per folder, so each reads its folder's partial index. PostgreSQL
keeps microsecond stamps; on both, the pull API pages by feed position, and the feed's
sequencer keeps stamps in feed order (submissions/feed.py).
"""

from django.db import migrations

NEXT = (
    "(SELECT CASE WHEN length(m) = 19 THEN m || '.000001' "
    "WHEN CAST(substr(m, 21) AS INTEGER) >= 999999 "
    "THEN strftime('%Y-%m-%d %H:%M:%S', substr(m, 1, 19), '+1 seconds') "
    "ELSE substr(m, 1, 20) || printf('%06d', CAST(substr(m, 21) AS INTEGER) + 1) END "
    "FROM (SELECT max(submitted_at) AS m FROM submissions_submission "
    "WHERE form_id = NEW.form_id AND status = '{status}' AND id <> NEW.id))"
)
BEHIND = (
    "EXISTS (SELECT 1 FROM submissions_submission WHERE form_id = NEW.form_id "
    "AND status = '{status}' AND submitted_at >= NEW.submitted_at AND id <> NEW.id)"
)
# An insert, and a restamp forward (a rescue into the inbox); a stamp moved back (an
# import, a test) is left where it was put.
TRIGGERS = {
    "insert": "AFTER INSERT ON submissions_submission FOR EACH ROW WHEN NEW.status = "
    "'{status}' AND " + BEHIND,
    "restamp": "AFTER UPDATE OF submitted_at, status ON submissions_submission FOR EACH ROW "
    "WHEN NEW.status = '{status}' AND (NEW.submitted_at > OLD.submitted_at "
    "OR NEW.status <> OLD.status) AND " + BEHIND,
}


def _names():
    for status in ("inbox", "spam"):
        for event, when in TRIGGERS.items():
            yield f"submission_{status}_{event}_order", when.format(status=status), status


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for name, when, status in _names():
        schema_editor.execute(
            f"CREATE TRIGGER {name} {when} BEGIN UPDATE submissions_submission "
            f"SET submitted_at = {NEXT.format(status=status)} WHERE id = NEW.id; END"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for name, _when, _status in _names():
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("submissions", "0007_idempotency_fingerprint")]

    operations = [migrations.RunPython(create, drop)]
