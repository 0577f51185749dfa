"""A real Celery worker process executes a task that writes to the test database."""

import time

from trajectories.models import Task
from trajectories.tasks import import_task_file_task


def test_worker_process_imports_tasks_into_the_database(celery_workers, shared_data):
    worker = celery_workers.start()
    import_task_file_task.delay(str(shared_data / "webarena" / "test.raw.json"))
    deadline = time.monotonic() + 90
    while Task.objects.count() < 812 and time.monotonic() < deadline and worker.poll() is None:
        time.sleep(0.5)
    celery_workers.stop_all()
    output = celery_workers.output()
    assert Task.objects.count() == 812, output
    assert "import_task_file_task" in output and "succeeded" in output, output
