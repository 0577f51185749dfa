"""The annotation tests' people: failures are annotated by the same roles as gold."""

from tests.annotation.conftest import _fast_password_hashing, annotator, other_annotator, reviewer  # noqa: F401
from tests.judges.conftest import llm_server, openai_config  # noqa: F401, E402
