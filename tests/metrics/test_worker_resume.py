"""A worker killed in the middle of an evaluation: restarted workers finish the job exactly once."""

import signal

from judges.local_llm import LocalLLMServer
from metrics.models import EvaluationJob, TrajectoryScore
from metrics.services import evaluation
from tests.factories import JudgeConfigFactory, run_with_one_step_gold

# Chunks are scored and stored whole: three of them, so that the kill lands between two.
TRAJECTORIES = 3 * evaluation.CHUNK_SIZE


def test_killed_worker_job_completes_with_one_score_per_trajectory(celery_workers):
    with LocalLLMServer(delay=0.3) as server:
        judge = JudgeConfigFactory(name="slow-llm", backend="openai", model="scripted", base_url=server.base_url,
                                   tested=True, options={"requests_per_minute": 0})
        run = run_with_one_step_gold("killed", TRAJECTORIES)
        job = evaluation.create_evaluation(runs=[run], judge_config=judge)
        evaluation.start_evaluation(job)

        first = celery_workers.start()
        celery_workers.wait_until(lambda: TrajectoryScore.objects.filter(job=job).exists(), 120)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        job.refresh_from_db()
        scored_when_killed = job.scores.count()
        assert job.status == EvaluationJob.Status.RUNNING and scored_when_killed < TRAJECTORIES

        celery_workers.start()
        celery_workers.wait_until(lambda: EvaluationJob.objects.get(pk=job.pk).status == EvaluationJob.Status.DONE,
                                  180)

    job.refresh_from_db()
    assert (job.total, job.done, job.failed) == (TRAJECTORIES, TRAJECTORIES, 0)
    per_trajectory = list(TrajectoryScore.objects.filter(job=job).values_list("trajectory_id", flat=True))
    assert len(per_trajectory) == len(set(per_trajectory)) == TRAJECTORIES
