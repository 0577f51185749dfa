"""The four verdict sources every run may have become `VerdictSource` rows: harness, offline check,
human graders, and the LLM judge of each judge configuration. Their verdicts stay where they are
(`metrics.selectors.verdicts_per_source` reads them under these rows), so nothing moves and nothing is lost."""

from django.db import migrations

BUILT_IN = [("harness", "harness", ""), ("rule_check", "offline check", ""), ("human", "human graders", "")]


def create_sources(apps, schema_editor):
    VerdictSource = apps.get_model("trajectories", "VerdictSource")
    JudgeConfig = apps.get_model("judges", "JudgeConfig")
    judges = [("llm_judge", f"LLM judge {name}", model or "")
              for name, model in JudgeConfig.objects.filter(backend="openai").values_list("name", "model")]
    for kind, name, model in BUILT_IN + judges:
        VerdictSource.objects.get_or_create(kind=kind, name=name, model=model)


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0009_evaluation_reruns_keep_history"),
        ("judges", "0003_outcome_judge"),
        ("trajectories", "0011_verdict_graders_and_labels"),
    ]

    operations = [migrations.RunPython(create_sources, migrations.RunPython.noop)]
