"""The step vectors' version: one row whose stamp the triggers on the vectors' table change in the writing
transaction itself, whatever the write (ORM, cascade, bulk, raw SQL), as does a step with a vector moving
(its index or trajectory changed: a search keeps both beside the vector). On PostgreSQL statement
triggers, a statement that changes no row leaving the stamp as it was (a cascade that finds no vectors
would otherwise make every search re-read them all); on SQLite, which has only row triggers, one per row.
Dropped with the migration (the sequence with its table)."""

from django.db import migrations, models

UPSERT = """INSERT INTO failures_stepvectorsversion (id, stamp) VALUES (1, {stamp})
    ON CONFLICT (id) DO UPDATE SET stamp = excluded.stamp"""

POSTGRESQL = [
    "CREATE SEQUENCE failures_stepvectorsversion_stamp OWNED BY failures_stepvectorsversion.stamp",
    f"""CREATE FUNCTION failures_step_vectors_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'TRUNCATE' THEN
        IF NOT EXISTS (SELECT FROM changed) THEN
            RETURN NULL;
        END IF;
    END IF;
    {UPSERT.format(stamp="nextval('failures_stepvectorsversion_stamp')")};
    RETURN NULL;
END
$$""",
    *(f"""CREATE TRIGGER failures_step_vectors_{name} AFTER {event} ON failures_stepvector
    REFERENCING {rows} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION failures_step_vectors_changed()"""
      for name, event, rows in (("inserted", "INSERT", "NEW"), ("updated", "UPDATE", "NEW"),
                                ("deleted", "DELETE", "OLD"))),
    """CREATE TRIGGER failures_step_vectors_truncated AFTER TRUNCATE ON failures_stepvector
    FOR EACH STATEMENT EXECUTE FUNCTION failures_step_vectors_changed()""",
    f"""CREATE FUNCTION failures_step_vectors_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT FROM failures_stepvector WHERE step_id = NEW.id) THEN
        {UPSERT.format(stamp="nextval('failures_stepvectorsversion_stamp')")};
    END IF;
    RETURN NULL;
END
$$""",
    """CREATE TRIGGER failures_step_vectors_moved AFTER UPDATE OF index, trajectory_id ON trajectories_step
    FOR EACH ROW WHEN (OLD.index IS DISTINCT FROM NEW.index OR OLD.trajectory_id IS DISTINCT FROM NEW.trajectory_id)
    EXECUTE FUNCTION failures_step_vectors_moved()""",
]
SQLITE = [
    *(f"""CREATE TRIGGER failures_step_vectors_{name} AFTER {event} ON failures_stepvector
BEGIN {UPSERT.format(stamp="random()")}; END"""
      for name, event in (("inserted", "INSERT"), ("updated", "UPDATE"), ("deleted", "DELETE"))),
    f"""CREATE TRIGGER failures_step_vectors_moved AFTER UPDATE OF "index", trajectory_id ON trajectories_step
WHEN (OLD."index" IS NOT NEW."index" OR OLD.trajectory_id IS NOT NEW.trajectory_id)
    AND EXISTS (SELECT 1 FROM failures_stepvector WHERE step_id = NEW.id)
BEGIN {UPSERT.format(stamp="random()")}; END""",
]
DROP = {  # a function goes with its triggers
    "postgresql": [f"DROP FUNCTION IF EXISTS failures_step_vectors_{name}() CASCADE" for name in ("changed", "moved")],
    "sqlite": [f"DROP TRIGGER IF EXISTS failures_step_vectors_{name}"
               for name in ("inserted", "updated", "deleted", "moved")],
}


def _run(statements):
    def run(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('failures', '0007_attribution_jobs'),
        ('trajectories', '0020_import_chunks'),
    ]

    operations = [
        migrations.CreateModel(
            name='StepVectorsVersion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('stamp', models.BigIntegerField()),
            ],
        ),
        migrations.RunPython(_run({"postgresql": POSTGRESQL, "sqlite": SQLITE}), _run(DROP)),
    ]
