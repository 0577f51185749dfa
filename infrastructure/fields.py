"""Model fields shared by the apps."""

from django.db import models


class RowwiseJSONField(models.JSONField):
    """A JSONField whose bulk inserts go to PostgreSQL as rows of VALUES.

    Django otherwise sends a bulk insert as one array per column (UNNEST), and psycopg then
    escapes every quote and backslash of each JSON text in Python: with the observations a
    groundedness question carries, or a score's details, that was most of the time spent
    storing them. Declaring a placeholder (the default one) is what makes Django use VALUES.
    """

    def get_placeholder(self, value, compiler, connection):
        return "%s"
