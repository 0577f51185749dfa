"""Steps' words for full-text search on PostgreSQL: the tables of a step's own words and its page's, their
GIN indexes, the trigger that writes both on every insert or update of a step's texts, and those of the
steps already stored. The tables and indexes are dropped with the migration (a trigger and function too)."""

import django.db.models.deletion
from django.contrib.postgres.search import SearchVectorField
from django.db import migrations, models

# The first 20,000 characters of each text: a page's text can be longer than a tsvector holds (1 MB), and a
# search's snippet reads only the head anyway. Angle brackets become
# spaces: the parser would drop markup as tags (and a script's body with them), where a page's markup is what
# the agent saw.
WORDS = """to_tsvector('english', translate(concat_ws(' ', left({row}.action, 20000), left({row}.action_value, 20000),
                                                     left({row}.reasoning, 20000)), '<>', '  '))"""
PAGE = """to_tsvector('english', translate(left({row}.observation, 20000), '<>', '  '))"""

CREATE = f"""
CREATE INDEX failures_stepdocument_words ON failures_stepdocument USING gin (words);
CREATE INDEX failures_steppagedocument_words ON failures_steppagedocument USING gin (words);

CREATE FUNCTION failures_step_document() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO failures_stepdocument (step_id, trajectory_id, index, words)
    VALUES (NEW.id, NEW.trajectory_id, NEW.index, {WORDS.format(row="NEW")})
    ON CONFLICT (step_id) DO UPDATE
        SET trajectory_id = EXCLUDED.trajectory_id, index = EXCLUDED.index, words = EXCLUDED.words;
    INSERT INTO failures_steppagedocument (document_id, words) VALUES (NEW.id, {PAGE.format(row="NEW")})
    ON CONFLICT (document_id) DO UPDATE SET words = EXCLUDED.words;
    RETURN NULL;
END
$$;

CREATE TRIGGER failures_step_document
    AFTER INSERT OR UPDATE OF action, action_value, reasoning, observation, trajectory_id, index
    ON trajectories_step FOR EACH ROW EXECUTE FUNCTION failures_step_document();

INSERT INTO failures_stepdocument (step_id, trajectory_id, index, words)
SELECT step.id, step.trajectory_id, step.index, {WORDS.format(row="step")} FROM trajectories_step step;
INSERT INTO failures_steppagedocument (document_id, words)
SELECT step.id, {PAGE.format(row="step")} FROM trajectories_step step;
"""

DROP = """
DROP TRIGGER IF EXISTS failures_step_document ON trajectories_step;
DROP FUNCTION IF EXISTS failures_step_document();
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('failures', '0005_step_vectors'),
        ('trajectories', '0020_import_chunks'),
    ]

    operations = [
        migrations.CreateModel(
            name='StepDocument',
            fields=[
                ('step', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='search_document', serialize=False, to='trajectories.step')),
                ('index', models.PositiveIntegerField(help_text="The step's, for the same reason.")),
                ('words', SearchVectorField()),
                ('trajectory', models.ForeignKey(help_text="The step's, kept here so that a search's scope needs no join.", on_delete=django.db.models.deletion.CASCADE, related_name='+', to='trajectories.trajectory')),
            ],
        ),
        migrations.CreateModel(
            name='StepPageDocument',
            fields=[
                ('document', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='page', serialize=False, to='failures.stepdocument')),
                ('words', SearchVectorField()),
            ],
        ),
        migrations.RunPython(_on_postgresql(CREATE), _on_postgresql(DROP)),
    ]
