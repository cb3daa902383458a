"""manage.py backup: the embedded SQLite database, copied while it runs."""

import io
import json
import sqlite3
import stat

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from submissions.models import Submission
from tests.conftest import add_submission


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_backup_copies_the_database_and_the_copy_reads_back(tmp_path):
    from accounts.models import User
    from forms_app.services import form_create

    owner = User.objects.create_user("owner@example.com", "a long passphrase")
    form = form_create(owner=owner, name="Contact", notify_owner=False)
    stored = add_submission(form, {"name": "Ada", "message": "Hello"})
    out = io.StringIO()

    call_command("backup", str(tmp_path / "copy.sqlite3"), stdout=out)

    copy = tmp_path / "copy.sqlite3"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert out.getvalue().startswith(f"Backed up the database to {copy} (")
    with sqlite3.connect(copy) as db:
        (data,) = db.execute(
            f"SELECT data FROM {Submission._meta.db_table} WHERE id = ?", [stored.pk.hex]
        ).fetchone()
    assert json.loads(data) == [["name", "Ada"], ["message", "Hello"]]


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_backup_into_a_folder_names_a_new_file(tmp_path):
    out = io.StringIO()

    call_command("backup", str(tmp_path), stdout=out)

    [copy] = list(tmp_path.glob("formflow-*.sqlite3"))
    assert str(copy) in out.getvalue()


@pytest.mark.sqlite
def test_backup_never_overwrites(db, tmp_path):
    existing = tmp_path / "copy.sqlite3"
    existing.write_text("keep me")

    with pytest.raises(CommandError, match="exists already"):
        call_command("backup", str(existing))
    assert existing.read_text() == "keep me"


def test_backup_refuses_postgresql_and_points_at_pg_dump(db, tmp_path, monkeypatch):
    monkeypatch.setattr(connection, "vendor", "postgresql")

    with pytest.raises(CommandError, match="back it up with pg_dump"):
        call_command("backup", str(tmp_path / "copy"))
    assert not (tmp_path / "copy").exists()
