"""On PostgreSQL, the statements every submission repeats are prepared once per connection;
DATABASE_PREPARED_STATEMENTS=false turns that off for poolers that share sessions."""

import pytest
from django.db import connection

from tests.conftest import submit
from tests.project.test_boot import start


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.postgres
def test_a_repeated_submission_statement_is_prepared(public, form):
    for _ in range(3):
        assert submit(public, form).status_code == 200

    stored = [sql for sql in prepared_statements() if "INSERT INTO" in sql and "submission" in sql]
    assert stored, prepared_statements()
    # Bound by the server: the parameters are placeholders, not quoted into the text.
    assert all("$1" in sql for sql in stored)


OPTIONS = "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS'])"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "{'server_side_binding': True, 'prepare_threshold': 2}"), ("false", "{}")],
)
def test_prepared_statements_can_be_turned_off(tmp_path, value, expected):
    env = {"DATABASE_URL": "postgres://nobody@127.0.0.1:9/formflow", "DEBUG": "true"}
    if value is not None:
        env["DATABASE_PREPARED_STATEMENTS"] = value
    result = start(tmp_path, ["-c", f"import django; django.setup(); {OPTIONS}"], **env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected
