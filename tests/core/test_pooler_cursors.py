"""Behind PgBouncer in transaction mode (docs/deploy.md), each transaction may run on another
server connection, and the server connection a transaction ran on may serve another client
before this one's next. A cursor that outlives its transaction (what Django's .iterator()
opens outside one: DECLARE ... WITH HOLD) then is not there for the next FETCH. Every path
that iterates rows is run here through a PgBouncer that this test starts, in transaction
mode, resetting each server connection as it goes back to the pool as a busy pool would
hand it to another client: a cursor left open fails at once with "cursor ... does not exist"."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from files.models import StoredFile
from integrations.delivery import attempt
from integrations.kinds.owner_email import digest
from integrations.models import Delivery, Integration, OwnerDigest
from submissions.export import pg
from submissions.models import Submission
from tests.conftest import add_submission
from tests.files.helpers import upload_form
from tests.integrations.test_owner_email import notified  # noqa: F401  (a notified form)
from tests.project.test_boot import start

PGBOUNCER = "/usr/sbin/pgbouncer"  # .ci/run installs it (apt's pgbouncer)

INI = """[databases]
* = host={host} port={port}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen}
unix_socket_dir =
auth_type = trust
auth_file = {userlist}
pool_mode = transaction
server_reset_query = DISCARD ALL
server_reset_query_always = 1
ignore_startup_parameters = extra_float_digits,options
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("PgBouncer did not listen")


@pytest.fixture
def pgbouncer(settings):
    """Django's connection, through a PgBouncer of its own in transaction mode, with the
    settings the deploy docs give for it (no prepared statements, no session timeouts)."""
    assert os.access(PGBOUNCER, os.X_OK), "pgbouncer is not installed (apt-get install pgbouncer)"
    database = connection.settings_dict
    # PgBouncer refuses to run as root: as root it runs as nobody, who must read its files.
    folder = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    folder.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    (folder / "userlist.txt").write_text(f'"{database["USER"]}" ""\n')
    port = free_port()
    ini = folder / "pgbouncer.ini"
    ini.write_text(INI.format(host=database["HOST"], port=database["PORT"] or 5432,
                              listen=port, userlist=folder / "userlist.txt"))
    for path in folder.iterdir():
        path.chmod(0o644)
    user = ["-u", "nobody"] if os.geteuid() == 0 else []
    process = subprocess.Popen([PGBOUNCER, *user, str(ini)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    saved = {key: database[key] for key in ("PORT", "OPTIONS", "DISABLE_SERVER_SIDE_CURSORS")}
    try:
        wait_for(port, process)
        settings.DATABASE_SESSION_TIMEOUTS = False
        connection.close()
        # As DATABASE_PREPARED_STATEMENTS=false and DATABASE_SERVER_SIDE_CURSORS=false set it
        # (test_server_side_cursors_can_be_turned_off).
        database.update(PORT=port, OPTIONS={}, DISABLE_SERVER_SIDE_CURSORS=True)
        yield port
    finally:
        connection.close()
        database.update(saved)
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder)


CURSORS = ("from django.conf import settings; "
           "print(settings.DATABASES['default']['DISABLE_SERVER_SIDE_CURSORS'])")


@pytest.mark.parametrize(("value", "disabled"), [(None, "False"), ("false", "True")])
def test_server_side_cursors_can_be_turned_off(tmp_path, value, disabled):
    env = {"DATABASE_URL": "postgres://nobody@127.0.0.1:9/formflow", "DEBUG": "true"}
    if value is not None:
        env["DATABASE_SERVER_SIDE_CURSORS"] = value
    result = start(tmp_path, ["-c", f"import django; django.setup(); {CURSORS}"], **env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == disabled


def through(pgbouncer: int) -> None:
    """This test's queries go through the pooler from here on."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert connection.connection.info.port == pgbouncer


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_hourly_digest_is_read_behind_the_pooler(notified, clock, pgbouncer):  # noqa: F811
    hour = digest.hour_of(clock.current) - timedelta(hours=3)
    clock.current = hour + timedelta(minutes=10)
    for number in range(22):  # 20 mailed one by one, 2 held for the digest
        submission = add_submission(notified, {"name": f"Person {number}"})
        Submission.objects.filter(pk=submission.pk).update(submitted_at=hour)
        attempt.delivery_run(Delivery.objects.get(submission=submission).pk)
    held = OwnerDigest.objects.get(form_id=notified.pk)
    integration = Integration.objects.get(form=notified)
    through(pgbouncer)

    message = digest.digest_message(integration, held)

    assert message.subject.startswith("New submissions: Contact (2 more, "), message.subject
    assert "name: Person 21" in message.body


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_erasure_preview_is_read_behind_the_pooler(owner_api, form, pgbouncer):
    add_submission(form, {"email": "ada@example.com"})
    add_submission(form, {"email": "bob@example.com"})
    through(pgbouncer)

    response = owner_api.get("/api/v1/erasures/preview", {"email": "ada@example.com"})

    assert response.status_code == 200, response.content
    assert response.json()["submissions"] == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_key_rotation_reads_the_files_behind_the_pooler(user, form, pgbouncer):
    for number in range(3):  # under no key in storage: each is counted as failed, not lost
        StoredFile.objects.create(owner=user, form_id=form.pk, submission_id=form.pk,
                                  field="cv", name="cv.pdf", size=1, content_type="text/plain",
                                  sha256="0" * 64, key=f"missing-{number}")
    through(pgbouncer)

    call_command("rotate_encryption_keys", stdout=(out := StringIO()))

    assert "3 could not be re-encrypted" in out.getvalue()


def open_cursors() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_cursors WHERE name LIKE '_django_curs%%'")
        return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["csv", "json"])
def test_the_exports_stream_behind_the_pooler(owner_api, user, pgbouncer, kind, monkeypatch):
    monkeypatch.setattr(pg, "BATCH", 2)  # the first rows go out before the last are read
    form = upload_form(user)  # its CSV carries the files' links: rows shaped in Python
    for number in range(3):
        add_submission(form, {"name": f"Person {number}"})
    through(pgbouncer)

    response = owner_api.get(f"/api/v1/forms/{form.pk}/export", {"format": kind})
    chunks = iter(response.streaming_content)
    first = next(chunks)
    # Still through a cursor, inside the export's transaction: its rows are not all held.
    assert open_cursors() == 1
    text = (first + b"".join(chunks)).decode()

    assert response.status_code == 200
    assert [f"Person {number}" in text for number in range(3)] == [True] * 3
