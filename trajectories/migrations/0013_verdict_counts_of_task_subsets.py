import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('trajectories', '0012_run_tallies_and_verdict_counts'),
    ]

    operations = [
        migrations.CreateModel(
            name='SubsetVerdictCount',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('source', models.CharField(max_length=32)),
                ('site', models.CharField(max_length=100)),
                ('passed', models.PositiveIntegerField(default=0)),
                ('total', models.PositiveIntegerField(default=0)),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='subset_verdict_counts', to='trajectories.agentrun')),
                ('subset', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='verdict_counts', to='trajectories.tasksubset')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('subset', 'source', 'run', 'site'), name='subset_verdict_count_unique')],
            },
        ),
        migrations.CreateModel(
            name='SubsetTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('trajectories', models.PositiveIntegerField(default=0)),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='subset_tallies', to='trajectories.agentrun')),
                ('subset', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='tallies', to='trajectories.tasksubset')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('subset', 'run'), name='subset_tally_unique')],
            },
        ),
    ]
