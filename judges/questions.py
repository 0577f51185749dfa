"""The questions metrics ask a judge, as plain data with stable hashes (Django-free).

A question's `inputs` are exactly what decides its answer, so they are what is hashed:
`inputs_hash` = sha256 of (kind, inputs) identifies the question whoever answers it (a human
verdict on it applies to every backend), and `cache_key` adds the backend, model and prompt
version that answered it. Agent steps enter as their action plus the resolved element; the
accessibility tree itself is not stored with every decision.
"""

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from .parsing import resolved_element
from .steps import JudgeStep

STEP_MATCH = "step_match"
TRAJECTORY_MATCH = "trajectory_match"
REPETITION = "repetition"
REQUIREMENTS = "requirements"
GROUNDEDNESS = "groundedness"
FUZZY_ANSWER = "fuzzy_answer"
# Which element is at the point a step acted on, asked with its screenshot (`judges.elements`).
ELEMENT_AT_POINT = "element_at_point"
KINDS = (STEP_MATCH, TRAJECTORY_MATCH, REPETITION, REQUIREMENTS, GROUNDEDNESS, FUZZY_ANSWER, ELEMENT_AT_POINT)
ASPECTS = ("grounded", "relevant")

# The observations a groundedness question carries (every backend judges on the same view):
# walking back from the last step, skipping blank ones and repeats of the one just taken, each
# observation keeps its first OBSERVATION_HEAD and last OBSERVATION_TAIL characters, until
# OBSERVATIONS_BUDGET characters are used; older observations are left out. Each kept one
# carries its step number, so a reader can see what was left out.
OBSERVATION_HEAD = 3_000
OBSERVATION_TAIL = 1_000
OBSERVATIONS_BUDGET = 24_000


@dataclass(frozen=True)
class Question:
    """`images` (data URIs) are sent with the question but neither hashed nor stored: its inputs
    name each image by the hash of its bytes."""

    kind: str
    inputs: dict
    images: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @cached_property
    def canonical_inputs(self) -> str:
        """The inputs as the JSON text that is hashed (and stored: encoding them again would cost
        as much). Inputs are never changed once a question is built; observations make them long."""
        return _canonical(self.inputs)

    @cached_property
    def inputs_hash(self) -> str:
        return _sha256_of_list(_head(self.kind), self.canonical_inputs)

    def cache_key(self, backend: str, model: str, prompt_version: str) -> str:
        return _sha256_of_list(_head(backend, model, prompt_version, self.kind), self.canonical_inputs)


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@lru_cache(maxsize=1024)
def _head(*values: str) -> str:
    """The canonical JSON of a list of these strings, without its closing bracket."""
    return _canonical(list(values))[:-1]


def _sha256_of_list(head: str, canonical_tail: str) -> str:
    """sha256 of the canonical JSON of a list: its leading items (`_head`), then the tail's encoding."""
    return hashlib.sha256(f"{head},{canonical_tail}]".encode()).hexdigest()


def step_inputs(step: JudgeStep) -> dict:
    role, name = resolved_element(step)
    return {
        "text": step.text.strip(),
        "action_type": step.action_type,
        "element_role": role,
        "element_name": name,
        "value": step.value,
    }


def step_match(gold: JudgeStep, agent: JudgeStep) -> Question:
    return Question(STEP_MATCH, {"gold": step_inputs(gold), "agent": step_inputs(agent)})


def trajectory_match(gold: list[JudgeStep], agent: list[JudgeStep]) -> Question:
    return Question(
        TRAJECTORY_MATCH, {"gold": [step_inputs(s) for s in gold], "agent": [step_inputs(s) for s in agent]}
    )


def cell(trajectory_inputs: dict, gold_index: int, agent_index: int) -> Question:
    """The pair question of one cell of a whole-trajectory question (0-based indexes)."""
    return Question(
        STEP_MATCH, {"gold": trajectory_inputs["gold"][gold_index], "agent": trajectory_inputs["agent"][agent_index]}
    )


def repetition(previous: JudgeStep, step: JudgeStep) -> Question:
    return Question(REPETITION, {"previous": step_inputs(previous), "step": step_inputs(step)})


def repetitions(agent: list[JudgeStep]) -> list[Question]:
    """Element k: is agent step k+2 a repeat of step k+1 (each step's element resolved once)."""
    steps = [step_inputs(step) for step in agent]
    return [Question(REPETITION, {"previous": previous, "step": step}) for previous, step in zip(steps, steps[1:])]


def requirement(intent: str, answer: str, requirement_text: str) -> Question:
    return Question(REQUIREMENTS, {"intent": intent, "answer": answer, "requirement": requirement_text})


def requirements(intent: str, answer: str, requirement_texts: list[str]) -> list[Question]:
    return [requirement(intent, answer, text) for text in requirement_texts]


def groundedness(aspect: str, intent: str, answer: str, observations: list[str]) -> Question:
    return _aspect_question(aspect, intent, answer, truncate_observations(observations))


def answer_quality(intent: str, answer: str, observations: list[str]) -> list[Question]:
    """The groundedness question of each aspect, in the order of ASPECTS."""
    kept = truncate_observations(observations)
    return [_aspect_question(aspect, intent, answer, kept) for aspect in ASPECTS]


def answer_quality_on_screenshots(intent: str, answer: str, screenshots: list[tuple[int, str, str]]) -> list[Question]:
    """The groundedness questions of a trajectory that records no page text, for a judge that sees
    screenshots: `screenshots` are (step, sha256, data URI), each named in the inputs by its hash."""
    shown = [{"step": step, "image": sha256} for step, sha256, _ in screenshots]
    images = tuple(uri for *_, uri in screenshots)
    return [Question(GROUNDEDNESS, {"aspect": aspect, "intent": intent, "answer": answer, "observations": [],
                                    "screenshots": shown}, images=images) for aspect in ASPECTS]


def _aspect_question(aspect: str, intent: str, answer: str, kept_observations: list[dict]) -> Question:
    if aspect not in ASPECTS:
        raise ValueError(f"aspect must be one of {ASPECTS}, not {aspect!r}")
    return Question(
        GROUNDEDNESS, {"aspect": aspect, "intent": intent, "answer": answer, "observations": kept_observations}
    )


def fuzzy_answer(intent: str, answer: str, reference: str) -> Question:
    return Question(FUZZY_ANSWER, {"intent": intent, "answer": answer, "reference": reference})


def truncate_observations(observations: list[str]) -> list[dict]:
    """The documented cut (see the constants above), newest first back to oldest kept."""
    kept, used = [], 0
    previous = None
    for number in range(len(observations), 0, -1):
        text = observations[number - 1].strip()
        if not text or text == previous:
            continue
        previous = text
        if len(text) > OBSERVATION_HEAD + OBSERVATION_TAIL:
            cut = len(text) - OBSERVATION_HEAD - OBSERVATION_TAIL
            text = f"{text[:OBSERVATION_HEAD]}\n[... {cut} characters cut ...]\n{text[-OBSERVATION_TAIL:]}"
        if used + len(text) > OBSERVATIONS_BUDGET:
            break
        kept.append({"step": number, "text": text})
        used += len(text)
    kept.reverse()
    return kept
