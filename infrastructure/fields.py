"""Model fields shared by the apps, and the bulk insert that PostgreSQL takes fastest."""

from collections.abc import Iterable

from django.db import connection, models


class RowwiseJSONField(models.JSONField):
    """A JSONField whose bulk inserts go to PostgreSQL as rows of VALUES.

    Django otherwise sends a bulk insert as one array per column (UNNEST), and psycopg then
    escapes every quote and backslash of each JSON text in Python: with the observations a
    groundedness question carries, or a score's details, that was most of the time spent
    storing them. Declaring a placeholder (the default one) is what makes Django use VALUES.
    """

    def get_placeholder(self, value, compiler, connection):
        return "%s"


def copy_new_rows(model, fields: list, rows: Iterable[list], returning: tuple[str, ...]) -> list[tuple]:
    """PostgreSQL: rows (values in the order of `fields`, JSON as text) into the model's table by
    COPY into a scratch table and one INSERT ... SELECT that skips rows conflicting with stored
    ones (another worker's); the `returning` columns of the rows inserted. Django's multi-row
    INSERT of hundreds of rows with long JSON cost more to build and quote than the work behind them.
    Run it in a transaction: the scratch table is dropped at the end, or rolled back with it."""
    quote = connection.ops.quote_name
    table, scratch = quote(model._meta.db_table), quote(f"new_{model._meta.db_table}")
    columns = ", ".join(quote(field.column) for field in fields)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TEMPORARY TABLE {scratch} AS SELECT {columns} FROM {table} WITH NO DATA")
        with cursor.copy(f"COPY {scratch} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {scratch} ON CONFLICT DO NOTHING "
                       f"RETURNING {', '.join(quote(column) for column in returning)}")
        inserted = cursor.fetchall()
        cursor.execute(f"DROP TABLE {scratch}")
    return inserted
