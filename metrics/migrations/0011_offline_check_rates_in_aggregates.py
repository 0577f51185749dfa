"""The offline check's success rate per run and site group, stored beside the aggregates of the evaluations
finished before it was (later evaluations store it themselves)."""

from collections import defaultdict

from django.db import migrations

CHECK_METRIC = "check_success"


def store_check_rates(apps, schema_editor):
    Aggregate = apps.get_model("metrics", "Aggregate")
    TrajectoryScore = apps.get_model("metrics", "TrajectoryScore")
    jobs = set(Aggregate.objects.values_list("job_id", flat=True).distinct())
    for job_id in jobs:
        cells = defaultdict(lambda: [0, 0, 0])  # (run, scope, group): passed, with a verdict, without
        rows = TrajectoryScore.objects.filter(job_id=job_id, error="").values_list(
            "trajectory__run_id", "trajectory__task__sites", "check_success")
        for run_id, sites, check in rows:
            site = "+".join(sorted(sites or [])) or "unknown"
            for key in ((run_id, "run", ""), (run_id, "site", site)):
                cell = cells[key]
                if check is None:
                    cell[2] += 1
                else:
                    cell[0] += bool(check)
                    cell[1] += 1
        Aggregate.objects.filter(job_id=job_id, metric=CHECK_METRIC).delete()
        Aggregate.objects.bulk_create([
            Aggregate(job_id=job_id, run_id=run_id, scope=scope, group=group, metric=CHECK_METRIC,
                      mean=passed / total if total else None, count=total, null_count=nulls)
            for (run_id, scope, group), (passed, total, nulls) in cells.items()
        ], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("metrics", "0010_built_in_verdict_sources")]

    operations = [migrations.RunPython(store_check_rates, migrations.RunPython.noop)]
