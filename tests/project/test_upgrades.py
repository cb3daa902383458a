"""Upgrades need no downtime (docs/operating.md, "Upgrades"): a release's migrations run while
the previous release's code still serves, so they only expand the schema. Dropping or renaming
a column or table that the previous release reads is a contract step, made a release later
than the one that stopped reading it, and named in CONTRACT_STEPS."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.db import connection, migrations, models
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

ROOT = Path(__file__).resolve().parents[2]

# Each app's last migration in 1.0.0 (the tree before the changelog opened 1.1.0); apps absent
# here had none. Raise these at each release, to that release's last migrations.
RELEASED = {
    "accounts": "0006_spam_learning",
    "forms_app": "0007_form_retention_days",
    "integrations": "0005_autoresponses",
    "pullapi": "0001_initial",
    "submissions": "0006_search",
}
PROJECT_APPS = {"accounts", "forms_app", "integrations", "pullapi", "submissions", "files",
                "operations"}

# The allow-list of contract steps: (app, migration) -> why the previous release no longer
# reads what it drops or renames, e.g.
#   ("accounts", "0014_drop_failed_attempts"): "unused since 1.1.0; 1.1.0 is the previous
#   release of the release that ships this",
CONTRACT_STEPS: dict[tuple[str, str], str] = {}

CONTRACTING = (migrations.RemoveField, migrations.RenameField, migrations.DeleteModel,
               migrations.RenameModel)
CONTRACTING_SQL = re.compile(r"\b(DROP\s+(COLUMN|TABLE)|RENAME\s+(COLUMN|TO))\b", re.I)


def number(name: str) -> int:
    return int(name.split("_", 1)[0])


def unreleased() -> list[tuple[str, str, migrations.Migration]]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    found = []
    for (app, name), migration in sorted(loader.disk_migrations.items()):
        if app not in PROJECT_APPS:
            continue
        if app in RELEASED and number(name) <= number(RELEASED[app]):
            continue
        found.append((app, name, migration))
    return found


def contracting(operation) -> str | None:
    if isinstance(operation, CONTRACTING):
        return operation.describe()
    if isinstance(operation, migrations.RunSQL):
        sql = operation.sql if isinstance(operation.sql, str) else " ".join(map(str, operation.sql))
        if CONTRACTING_SQL.search(sql):
            return f"SQL: {sql[:80]}"
    return None


def released_models() -> set[tuple[str, str]]:
    """(app, model) of every table the released code has."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    state = loader.project_state([(app, name) for app, name in RELEASED.items()])
    return {(app, model) for app, model in state.models if app in RELEASED}


def not_null_without_database_default(operation) -> bool:
    """A column the previous release's code does not know, and that its inserts leave out: it
    must be nullable or have a default in the database (Django's ``default`` is only Python's,
    dropped from the table once the column is added)."""
    if not isinstance(operation, (migrations.AddField, migrations.AlterField)):
        return False
    field = operation.field
    return not (field.null or field.many_to_many or field.db_default is not models.NOT_PROVIDED)


def test_the_released_migrations_are_on_disk():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    for app, name in RELEASED.items():
        assert (app, name) in loader.disk_migrations


def test_no_unreleased_migration_drops_or_renames_a_column_or_table():
    offending = []
    for app, name, migration in unreleased():
        if (app, name) in CONTRACT_STEPS:
            continue
        for operation in migration.operations:
            what = contracting(operation)
            if what:
                offending.append(f"{app}.{name}: {what}")
    assert offending == [], (
        "the previous release's code may still read these while the migration runs: keep the "
        "column (unused, with a db_default) and drop it a release later (CONTRACT_STEPS)")


def released_columns_written() -> set[tuple[str, str, str]]:
    """(app, model, field) of every column the released code's inserts always fill: Django
    names every concrete field in an INSERT but one it leaves to a database default."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    state = loader.project_state([(app, name) for app, name in RELEASED.items()])
    return {(app, model, name) for (app, model), model_state in state.models.items()
            if app in RELEASED for name, field in model_state.fields.items()
            if field.db_default is models.NOT_PROVIDED}


def altered_column_it_writes(app: str, operation, written: set) -> bool:
    """An altered column the released code fills in every insert (a longer slug, say)."""
    return isinstance(operation, migrations.AlterField) and (
        app, operation.model_name_lower, operation.name_lower) in written


def test_columns_added_to_released_tables_are_nullable_or_have_a_database_default():
    released = released_models()
    written = released_columns_written()
    offending = [
        f"{app}.{name}: {operation.describe()}"
        for app, name, migration in unreleased()
        for operation in migration.operations
        if (app, operation.model_name_lower if hasattr(operation, "model_name_lower") else "")
        in released and not_null_without_database_default(operation)
        and not altered_column_it_writes(app, operation, written)
    ]
    assert offending == [], "the previous release's inserts would fail: add a db_default"


def test_the_check_still_finds_a_new_not_null_column_and_a_default_taken_away():
    written = released_columns_written()
    added = migrations.AddField("form", "x", models.IntegerField())
    altered = migrations.AlterField("form", "slug", models.CharField(max_length=64))
    assert not_null_without_database_default(added)
    assert not altered_column_it_writes("forms_app", added, written)
    assert altered_column_it_writes("forms_app", altered, written)
    assert not altered_column_it_writes(
        "forms_app", migrations.AlterField("form", "new_column", models.IntegerField()), written)
    # status has a database default in the released code, so its inserts may leave it out.
    assert not altered_column_it_writes(
        "submissions", migrations.AlterField("submission", "status", models.CharField()),
        written)


def test_the_check_finds_a_removed_field():
    removal = migrations.RemoveField(model_name="emailcode", name="failed_attempts")
    assert contracting(removal)
    assert contracting(migrations.RunSQL("ALTER TABLE t DROP COLUMN c"))
    added = migrations.AddField("emailcode", "x", models.IntegerField(db_default=0))
    assert contracting(added) is None


def test_release_1_0_0_code_can_still_write_an_email_code(user):
    """1.0.0 inserts codes with its own columns only: the columns added since have defaults
    in the database, and the one it counts wrong tries in is still there."""
    now = models.DateTimeField().get_db_prep_value(timezone.now(), connection)
    user_id = type(user)._meta.pk.get_db_prep_value(user.pk, connection)
    table = connection.ops.quote_name("accounts_emailcode")
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (user_id, purpose, code_hash, expires_at, failed_attempts,"
            " sent_at, send_window_start, sends_in_window) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [user_id, "verify", "0" * 64, now, 0, now, now, 1],
        )
        cursor.execute(f"UPDATE {table} SET failed_attempts = failed_attempts + 1")

    from accounts.models import EmailCode

    code = EmailCode.objects.get(user=user)
    assert code.wrong_tries == {}
    assert code.link_hash == ""


def test_release_1_1_0_code_can_still_write_an_email_code_and_its_tries_count(user):
    """1.1.0 still writes requested_by (the column stays, the model forgot it) and counts wrong
    tries per client: 1.2.0 counts their sum toward the code's 5."""
    now = models.DateTimeField().get_db_prep_value(timezone.now(), connection)
    user_id = type(user)._meta.pk.get_db_prep_value(user.pk, connection)
    table = connection.ops.quote_name("accounts_emailcode")
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (user_id, purpose, code_hash, expires_at, wrong_tries,"
            " requested_by, sent_at, send_window_start, sends_in_window)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [user_id, "verify", "0" * 64, now, '{"192.0.2.1": 2, "192.0.2.2": 3}',
             "192.0.2.1", now, now, 1],
        )

    from accounts.models import EmailCode

    code = EmailCode.objects.get(user=user)
    assert code.wrong_try_count() == 5
    code.delete()  # 1.2.0 writes rows without the column: its default in the database fills it
    EmailCode.objects.create(user=user, code_hash="1" * 64, expires_at=timezone.now(),
                             sent_at=timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT requested_by FROM {table}")
        assert cursor.fetchone() == ("",)


# --- Upgrades change no behaviour by themselves (contract, "Operations") ----------------------

# Each app's last migration in 1.1.0: the tree when 1.2.0 opened.
RELEASED_1_1_0 = {
    "accounts": "0015_usage_generation_sequence",
    "files": "0001_initial",
    "forms_app": "0009_form_notify_owner",
    "integrations": "0008_event_subscriptions",
    "operations": "0001_initial",
    "pullapi": "0002_api_key_scopes",
    "submissions": "0011_read_state",
}


@pytest.fixture
def scratch_database(tmp_path) -> Iterator[str]:
    """A DATABASE_URL naming an empty database on this pass's backend."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / 'upgrade.sqlite3'}"
        return
    import psycopg

    url = urlsplit(settings.DATABASE_URL)
    name = f"{url.path.lstrip('/')}_upgrade"
    admin = urlunsplit(url._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as server:
        server.execute(f'DROP DATABASE IF EXISTS "{name}"')
        server.execute(f'CREATE DATABASE "{name}"')
    yield urlunsplit(url._replace(path=f"/{name}"))
    with psycopg.connect(admin, autocommit=True) as server:
        server.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def upgrade(database_url: str, tmp_path: Path, steps: list) -> dict[str, list]:
    env = {**os.environ, "DATABASE_URL": database_url, "DATA_DIR": str(tmp_path / "data"),
           "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    result = subprocess.run([sys.executable, "-m", "tests.project.upgrade_drill",
                             json.dumps(steps)], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_upgrading_from_1_0_0_keeps_owner_email_off_for_its_forms(scratch_database, tmp_path):
    """And every form keeps its place under 1.2.0's teams: its owner's own (no team), reached
    with the owner role, counted on its owner's monthly limit."""
    found = upgrade(scratch_database, tmp_path, [
        ["migrate", RELEASED],
        ["form", "Made under 1.0.0"],
        ["migrate", None],
        ["new_form", "Made after the upgrade"],
    ])

    assert found == {
        "Made under 1.0.0": [False, False, None, "owner", True],
        "Made after the upgrade": [True, True, None, "owner", True],
    }


def test_an_installation_at_1_1_0_turns_off_only_what_the_upgrade_turned_on(scratch_database,
                                                                            tmp_path):
    found = upgrade(scratch_database, tmp_path, [
        ["migrate", RELEASED],
        ["form", "Untouched since 1.0.0"],
        ["form", "Saved by its owner under 1.1.0"],
        ["migrate", RELEASED_1_1_0],
        ["save", "Saved by its owner under 1.1.0"],
        ["form", "Made under 1.1.0"],
        ["migrate", None],
        ["new_form", "Made under 1.2.0"],
    ])

    assert found == {
        "Untouched since 1.0.0": [False, False, None, "owner", True],
        "Saved by its owner under 1.1.0": [True, True, None, "owner", True],
        "Made under 1.1.0": [True, True, None, "owner", True],
        "Made under 1.2.0": [True, True, None, "owner", True],
    }


def changelog_entries() -> dict[str, str]:
    """Each release's part of CHANGELOG.md, by version."""
    text = (ROOT / "CHANGELOG.md").read_text()
    parts = re.split(r"^## \[([^\]]+)\][^\n]*\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_changelog_entry_has_an_upgrading_part():
    entries = changelog_entries()
    assert {"1.0.0", "1.1.0", "1.2.0"} <= set(entries)
    for version, entry in entries.items():
        upgrading = re.search(r"^### Upgrading\n((?:- .*\n(?:  .*\n)*)+)", entry, re.M)
        assert upgrading, f"{version} has no Upgrading part listing what changes"


def test_1_1_0_says_it_turned_owner_email_on_first():
    upgrading = changelog_entries()["1.1.0"].split("### Upgrading\n", 1)[1]
    first = upgrading.split("\n- ", 1)[0]
    assert "Owner email turns on for every existing form" in first
