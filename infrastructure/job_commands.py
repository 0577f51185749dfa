"""What the commands that start a background job of one pass share: the start, refused in the words of the
option at fault, and with --wait the job followed to its end and its result printed."""

import time
from collections.abc import Callable

from django.core.management.base import BaseCommand, CommandError

from infrastructure.jobs import BackgroundJob, JobStatus, WorkersUnreachable


class JobCommand(BaseCommand):
    """A command that starts one job; the job's `errors` are the items it left undone, each {"task", "error"}."""

    poll_seconds = 0.5

    def start_job(self, create: Callable[[], BackgroundJob], *, option: str, wait: bool) -> BackgroundJob:
        """`create()`'s job; its ValueError is the fault of `option`. When the workers cannot be reached the
        job is kept and the sweeper sends it later: an error without --wait, a warning before waiting."""
        try:
            return create()
        except ValueError as exc:
            raise CommandError(f"{option}: {exc}") from None
        except WorkersUnreachable as exc:
            if not wait:
                raise CommandError(str(exc)) from None
            self.stderr.write(str(exc))
            return exc.job

    def wait_for(self, job: BackgroundJob, outcome: Callable[[BackgroundJob], str]) -> None:
        """Print the job's result once it has finished, `outcome(job)` saying what it did (its counts, its
        requests and cost); an error unless it is done."""
        while job.is_unfinished:
            time.sleep(self.poll_seconds)
            job.refresh_from_db()
        self.stdout.write(f"{job.job_kind} #{job.pk} {job.status}: {outcome(job)}")
        for item in job.errors:
            self.stdout.write(f"- task {item['task']}: {item['error']}")
        if job.status != JobStatus.DONE:
            raise CommandError(f"{job.job_kind} #{job.pk} failed: {job.error}")
