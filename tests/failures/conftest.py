"""The annotation tests' people: failures are annotated by the same roles as gold."""

from tests.annotation.conftest import _fast_password_hashing, annotator, other_annotator, reviewer  # noqa: F401
