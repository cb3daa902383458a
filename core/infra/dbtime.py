"""The database's clock, as a column default and in queries."""

from django.db.models.functions import Now


class DatabaseNow(Now):
    """``Now()`` that SQLite writes in the same text form as Django's own datetime values.

    SQLite keeps datetimes as text and compares them as text. Django writes
    ``YYYY-MM-DD HH:MM:SS.ffffff``, leaving the fraction out when it is zero, while SQLite's
    clock gives three digits (``SS.fff``). Mixed, a stamped time and the same instant sent back
    as a parameter compare unequal, so a keyset cursor would repeat or skip rows. PostgreSQL
    has a real timestamp type and keeps Django's ``STATEMENT_TIMESTAMP()``.
    """

    # SQLite fixes 'now' for the whole statement, so the three reads below agree.
    sqlite_instant = "'NOW'"

    def as_sqlite(self, compiler, connection, **extra_context):
        clock = f"STRFTIME('%%%%Y-%%%%m-%%%%d %%%%H:%%%%M:%%%%f', {self.sqlite_instant})"
        template = (
            f"(CASE WHEN SUBSTR({clock}, 21) = '000' THEN SUBSTR({clock}, 1, 19)"
            f" ELSE {clock} || '000' END)"
        )
        return self.as_sql(compiler, connection, template=template, **extra_context)
