"""The built-in verdict sources become rows: harness, offline check, human graders, and each LLM judge."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("metrics", "0009_evaluation_reruns_keep_history"), ("trajectories", "0011_verdict_graders_and_labels"),
          ("judges", "0003_outcome_judge")]
AFTER = [("metrics", "0010_built_in_verdict_sources")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_the_built_in_sources_and_each_llm_judge_become_sources():
    try:
        old = _migrate(BEFORE)
        old.get_model("trajectories", "VerdictSource").objects.all().delete()
        JudgeConfig = old.get_model("judges", "JudgeConfig")
        JudgeConfig.objects.create(name="gpt-4o-judge", backend="openai", model="gpt-4o")
        JudgeConfig.objects.create(name="exact", backend="exact")
        VerdictSource = _migrate(AFTER).get_model("trajectories", "VerdictSource")
        assert sorted(VerdictSource.objects.values_list("kind", "name", "model")) == [
            ("harness", "harness", ""), ("human", "human graders", ""),
            ("llm_judge", "LLM judge gpt-4o-judge", "gpt-4o"),
            ("rule_check", "offline check", "")]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
