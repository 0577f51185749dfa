"""The API's JSON bodies for errors met before or outside a view: Django's request limits and unreachable
workers. Shared by the API's exception handler and the request middleware, which answers them under /api/."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent

from infrastructure.jobs import WorkersUnreachable

REQUEST_LIMITS = (TooManyFilesSent, TooManyFieldsSent, RequestDataTooBig)


def request_limit_error(error: Exception) -> tuple[dict, int]:
    """The API's error body and status for a request over one of Django's limits."""
    if isinstance(error, TooManyFilesSent):
        return {"detail": f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files in one request "
                          "(UPLOAD_MAX_FILES): send them in several requests, or zipped", "code": "too_many_files"}, 400
    if isinstance(error, TooManyFieldsSent):
        return {"detail": f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields in one request",
                "code": "too_many_fields"}, 400
    return {"detail": f"the request body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes "
                      "(DATA_UPLOAD_MAX_MEMORY_SIZE); send files as multipart uploads",
            "code": "request_too_large"}, 413


def workers_unreachable_body(exc: WorkersUnreachable) -> dict:
    job = exc.job
    return {"detail": str(exc), "code": "workers_unreachable",
            "job": {"kind": job.job_kind, "id": job.pk, "url": job.get_absolute_url()}}
