"""The index behind searching submissions' values (submissions/search.py).

PostgreSQL: pg_trgm (a trusted extension: the database's owner may create it) and a trigram
GIN index over the values' text, built CONCURRENTLY so that intake goes on storing while it is
built on a big table. SQLite: an FTS5 table with the trigram tokenizer, kept by triggers. Its
rows are tied to submissions through a table of its own with an INTEGER PRIMARY KEY, whose
ids VACUUM never renumbers, as it may a table's implicit rowid.
"""

from django.db import migrations

PG_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS submission_values_trgm "
    "ON submissions_submission "
    "USING gin (((jsonb_path_query_array(data, '$[*][1]'))::text) gin_trgm_ops)",
]
PG_BACKWARD = ["DROP INDEX CONCURRENTLY IF EXISTS submission_values_trgm"]

VALUES_TEXT = (
    "(SELECT group_concat(json_extract(pair.value, '$[1]'), char(10)) "
    "FROM json_each({row}.data) AS pair)"
)
SQLITE_FORWARD = [
    "CREATE TABLE submissions_search_ids ("
    "id INTEGER PRIMARY KEY, submission_id char(32) NOT NULL UNIQUE)",
    "CREATE VIRTUAL TABLE submissions_search USING fts5(body, tokenize='trigram')",
    "INSERT INTO submissions_search_ids (submission_id) SELECT id FROM submissions_submission",
    "INSERT INTO submissions_search (rowid, body) SELECT ids.id, "
    + VALUES_TEXT.format(row="s")
    + " FROM submissions_search_ids ids JOIN submissions_submission s ON s.id = ids.submission_id",
    "CREATE TRIGGER submissions_search_insert AFTER INSERT ON submissions_submission BEGIN "
    "INSERT INTO submissions_search_ids (submission_id) VALUES (new.id); "
    "INSERT INTO submissions_search (rowid, body) VALUES (last_insert_rowid(), "
    + VALUES_TEXT.format(row="new")
    + "); END",
    "CREATE TRIGGER submissions_search_delete AFTER DELETE ON submissions_submission BEGIN "
    "DELETE FROM submissions_search WHERE rowid = "
    "(SELECT id FROM submissions_search_ids WHERE submission_id = old.id); "
    "DELETE FROM submissions_search_ids WHERE submission_id = old.id; END",
    "CREATE TRIGGER submissions_search_update AFTER UPDATE OF data ON submissions_submission "
    "BEGIN UPDATE submissions_search SET body = "
    + VALUES_TEXT.format(row="new")
    + " WHERE rowid = (SELECT id FROM submissions_search_ids WHERE submission_id = new.id); END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS submissions_search_update",
    "DROP TRIGGER IF EXISTS submissions_search_delete",
    "DROP TRIGGER IF EXISTS submissions_search_insert",
    "DROP TABLE IF EXISTS submissions_search",
    "DROP TABLE IF EXISTS submissions_search_ids",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [("submissions", "0005_folder_counts")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": PG_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": PG_BACKWARD, "sqlite": SQLITE_BACKWARD}),
        )
    ]
