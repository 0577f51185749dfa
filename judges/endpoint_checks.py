"""Testing a judge configuration's endpoint: one small question of each kind, straight to the
backend (no cache), and for each whether its answer parsed, the structured-output mode that
worked, latency, tokens and cost. The report is kept on the configuration; an LLM judge is
offered, and evaluations and outcome jobs start on it, only once it has a key and endpoint and its
last test passed (`check_choosable`).
"""

import base64
import io

from django.utils import timezone
from PIL import Image

from . import elements, outcome_questions
from . import questions as q
from .backends import make_backend
from .backends.base import EndpointUnreachable
from .models import JudgeBackend, JudgeConfig
from .services import backend_spec
from .steps import JudgeStep

_KINDS_WITH_IMAGES = (q.ELEMENT_AT_POINT, outcome_questions.SCREENSHOT)
NO_IMAGES = "not asked: the judge reads no images"
NO_OUTCOMES = "not asked: only an OpenAI-compatible judge runs the outcome judge"


def _screenshot() -> bytes:
    """A small page: a search box and a button, enough for a question about an image."""
    image = Image.new("RGB", (320, 200), "white")
    image.paste((40, 90, 200), (210, 80, 300, 120))
    image.paste((230, 230, 230), (20, 80, 200, 120))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def probe_questions() -> list[q.Question]:
    """One small question of each kind a judge is asked, none of which it can settle without its model."""
    gold = JudgeStep("Click on the 'Orders' link in the account menu.")
    agent = JudgeStep("click [12] where [12] is link 'My Orders'")
    other = JudgeStep("type [7] [blue kettle] where [7] is searchbox 'Search'")
    intent = "What is the price of the blue kettle?"
    image = _screenshot()
    shot = outcome_questions.Shot(1, "endpoint-check", "data:image/png;base64," + base64.b64encode(image).decode())
    return [
        q.step_match(gold, agent),
        q.trajectory_match([gold], [other, agent]),
        q.repetition(other, agent),
        q.requirement(intent, "The blue kettle costs $25.", "twenty-five dollars"),
        *q.answer_quality(intent, "It costs $25.", ["Blue kettle - $25.00 - In stock"]),
        q.fuzzy_answer(intent, "25 dollars", "$25"),
        elements.element_question("I will click the Search button.", "Click at (255, 100)", 255, 100,
                                  "endpoint-check", elements.crop_around(image, 255, 100)),
        outcome_questions.key_points_question(intent),
        outcome_questions.screenshot_question(intent, ["the price of the blue kettle"], shot),
        outcome_questions.verdict_question(intent, ["the price of the blue kettle"], "$25",
                                           ["type [7] [blue kettle]"], []),
    ]


def run_endpoint_test(config: JudgeConfig) -> dict:
    """Ask the probe questions, keep the report on the configuration and return it."""
    backend = make_backend(backend_spec(config))
    questions = probe_questions()
    skipped = {id(question): reason for question in questions for reason in [_not_asked(backend, question)] if reason}
    asked = [question for question in questions if id(question) not in skipped]
    try:
        answers, unreachable = dict(zip((id(question) for question in asked), backend.answer(asked))), ""
    except EndpointUnreachable as error:
        answers, unreachable = {}, str(error)
    rows = []
    for question in questions:
        label = question.inputs.get("aspect", question.kind) if question.kind == q.GROUNDEDNESS else question.kind
        answer = answers.get(id(question))
        if answer is None and unreachable:
            rows.append({"question": label, "asked": True, "parsed": False, "error": unreachable})
            continue
        if answer is None:
            rows.append({"question": label, "asked": False, "parsed": None, "error": skipped[id(question)]})
            continue
        rows.append({
            "question": label, "asked": True, "parsed": not answer.error, "error": answer.error,
            "structured_output": answer.structured_output, "repairs": answer.repairs, "coerced": list(answer.coerced),
            "latency_ms": answer.latency_ms, "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens, "cost": str(answer.cost), "calls": answer.calls,
        })
    failed = [row for row in rows if row["asked"] and not row["parsed"]]
    report = {
        "ok": not failed,
        "tested_at": timezone.now().isoformat(),
        "backend": backend.name,
        "model": backend.model,
        "error": unreachable or "; ".join(f"{row['question']}: {row['error']}" for row in failed),
        "questions": rows,
    }
    config.last_test = report
    config.save(update_fields=["last_test"])
    return report


def _not_asked(backend, question: q.Question) -> str:
    """Why the backend is not asked this question (it is never asked it in a job either), or ""."""
    if question.kind in _KINDS_WITH_IMAGES and not backend.sees_screenshots:
        return NO_IMAGES
    if question.kind in outcome_questions.KINDS and backend.name != JudgeBackend.OPENAI:
        return NO_OUTCOMES
    return ""


NOT_CONFIGURED = "judge_not_configured"
UNTESTED = "judge_untested"
TEST_FAILED = "judge_test_failed"


class JudgeNotChoosable(ValueError):
    """An LLM judge no job may start on yet; `code` says which of the three reasons it is."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def why_not_choosable(config: JudgeConfig) -> JudgeNotChoosable | None:
    """Why no job may start on this judge, or None. Judges without a model endpoint are always choosable."""
    if config.backend != JudgeBackend.OPENAI:
        return None
    test_it = (f"test it on its page (/judges/{config.name}/), with POST /api/judge-configs/<id>/test/ "
               f"or manage.py test_judge {config.name}")
    spec = backend_spec(config)
    if config.api_key_env and not spec.api_key:
        return JudgeNotChoosable(NOT_CONFIGURED, f"judge {config.name!r} has no API key: the environment variable "
                                                 f"{config.api_key_env} is not set")
    if not config.base_url and not spec.api_key:
        return JudgeNotChoosable(NOT_CONFIGURED, f"judge {config.name!r} has no endpoint of its own and "
                                                 f"OPENAI_API_KEY is not set for {spec.base_url}")
    report = config.last_test or {}
    if not report:
        return JudgeNotChoosable(UNTESTED, f"judge {config.name!r} has never answered an endpoint test: {test_it}")
    if not report.get("ok"):
        return JudgeNotChoosable(
            TEST_FAILED, f"judge {config.name!r} failed its last endpoint test ({report.get('tested_at', '')[:19]}): "
                         f"{report.get('error')}. Once the endpoint is fixed, {test_it}")
    return None


def check_choosable(config: JudgeConfig) -> None:
    """JudgeNotChoosable (a ValueError) naming why, when no job may start on this judge."""
    refusal = why_not_choosable(config)
    if refusal is not None:
        raise refusal
