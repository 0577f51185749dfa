"""Key-node Completion (METRICS.md, Mind2Web-Live): the share of a task's key nodes the trajectory reaches.

A key node is a checkpoint of WebCanvas's Mind2Web-Live tasks, `{match_function_name, content}`;
it is satisfied when some step of the trajectory meets it, in any order (WebCanvas's
"completion rate"; its "task success rate" is all key nodes satisfied):
- `url_included_match`: the reference is contained in a step's URL (both percent-decoded);
- `url_exactly_match`: with a `key`, that query parameter of a step's URL equals the
  reference; without, the step's URL equals it (percent-decoded, trailing "/" ignored);
- `element_path_exactly_match`: the element a step acted on (its selector) equals the reference;
- `element_value_exactly_match`: the value a step typed or selected equals the reference;
- `url_semantic_match` / `element_value_semantic_match`: the judge finds a step's URL / value
  means the reference (score >= tau); each distinct URL or value is one question.
Element checkpoints with a `netloc` only count steps on a page whose host contains it.
Surrounding whitespace is ignored everywhere. No key nodes: the metric is None.
"""

import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .base import DEFAULT_TAU, MetricResult, check_score, check_tau

URL_INCLUDED = "url_included_match"
URL_EXACT = "url_exactly_match"
URL_SEMANTIC = "url_semantic_match"
PATH_EXACT = "element_path_exactly_match"
VALUE_EXACT = "element_value_exactly_match"
VALUE_SEMANTIC = "element_value_semantic_match"
SEMANTIC = (URL_SEMANTIC, VALUE_SEMANTIC)


@dataclass(frozen=True)
class VisitedStep:
    """What a key node can look at in one agent step."""

    url: str = ""
    element_path: str = ""
    value: str = ""


@dataclass(frozen=True)
class SemanticQuestion:
    """Does `candidate` (a URL or a value the agent produced) mean `reference`?"""

    kind: str
    reference: str
    candidate: str


@dataclass(frozen=True)
class KeyNodeCheck:
    index: int  # 1-based position among the task's key nodes
    match_function: str
    reference: str
    satisfied: bool
    step: int | None = None  # first step that satisfied it
    judge_score: float | None = None


@dataclass(frozen=True)
class KeyNodeCompletion(MetricResult):
    value: float | None
    satisfied: int
    total: int
    all_satisfied: bool | None
    checks: tuple[KeyNodeCheck, ...]
    tau: float


def _decoded(url: str) -> str:
    return urllib.parse.unquote(url.strip())


def _url_exact(content: Mapping, reference: str, url: str) -> bool:
    key = (content.get("key") or "").strip()
    if key:
        values = urllib.parse.parse_qs(urllib.parse.urlparse(url.strip()).query).get(key, [])
        return reference in [value.strip() for value in values]
    return _decoded(url).rstrip("/") == _decoded(reference).rstrip("/")


def _on_site(content: Mapping, step: VisitedStep) -> bool:
    netloc = (content.get("netloc") or "").strip()
    return not netloc or netloc in (urllib.parse.urlparse(step.url).hostname or "")


def _candidate(kind: str, step: VisitedStep) -> str:
    return (step.url if kind == URL_SEMANTIC else step.value).strip()


def _parse(node, where: str) -> tuple[str, Mapping, str]:
    if not isinstance(node, Mapping) or not isinstance(node.get("content"), Mapping):
        raise ValueError(f"{where}: expected {{match_function_name, content}}, got {node!r}")
    kind, content = node.get("match_function_name"), node["content"]
    if kind not in (URL_INCLUDED, URL_EXACT, URL_SEMANTIC, PATH_EXACT, VALUE_EXACT, VALUE_SEMANTIC):
        raise ValueError(f"{where}.match_function_name: unknown match function {kind!r}")
    reference = content.get("reference_answer")
    if not isinstance(reference, str):
        raise ValueError(f"{where}.content.reference_answer: expected a string, got {reference!r}")
    return kind, content, reference.strip()


def key_node_questions(key_nodes: Sequence[Mapping], steps: Sequence[VisitedStep]) -> tuple[SemanticQuestion, ...]:
    """The judge questions of the semantic key nodes: each distinct URL or value against the reference."""
    questions = []
    for position, node in enumerate(key_nodes):
        kind, content, reference = _parse(node, f"key_nodes[{position}]")
        if kind in SEMANTIC:
            for step in steps:
                candidate = _candidate(kind, step)
                if candidate and (kind == URL_SEMANTIC or _on_site(content, step)):
                    questions.append(SemanticQuestion(kind, reference, candidate))
    return tuple(dict.fromkeys(questions))


def _check(index: int, kind: str, content: Mapping, reference: str, steps: Sequence[VisitedStep],
           scores: Mapping[SemanticQuestion, float], tau: float) -> KeyNodeCheck:
    best = None
    for number, step in enumerate(steps, start=1):
        if kind == URL_INCLUDED:
            met = bool(step.url) and _decoded(reference) in _decoded(step.url)
        elif kind == URL_EXACT:
            met = bool(step.url) and _url_exact(content, reference, step.url)
        elif kind == PATH_EXACT:
            met = _on_site(content, step) and bool(step.element_path) and step.element_path.strip() == reference
        elif kind == VALUE_EXACT:
            met = _on_site(content, step) and bool(step.value) and step.value.strip() == reference
        else:
            candidate = _candidate(kind, step)
            if not candidate or (kind == VALUE_SEMANTIC and not _on_site(content, step)):
                continue
            question = SemanticQuestion(kind, reference, candidate)
            if question not in scores:
                raise ValueError(f"no judge score for {kind} {reference!r} against {candidate!r}")
            score = scores[question]
            if score >= tau:
                return KeyNodeCheck(index, kind, reference, True, number, score)
            best = score if best is None else max(best, score)
            continue
        if met:
            return KeyNodeCheck(index, kind, reference, True, number)
    return KeyNodeCheck(index, kind, reference, False, None, best)


def key_node_completion(
    key_nodes: Sequence[Mapping],
    steps: Sequence[VisitedStep],
    semantic_scores: Mapping[SemanticQuestion, float] | None = None,
    *,
    tau: float = DEFAULT_TAU,
) -> KeyNodeCompletion:
    """Satisfied key nodes / key nodes; `semantic_scores` answers `key_node_questions` (pass at >= tau)."""
    tau = check_tau(tau)
    scores = {question: check_score(score, f"judge score for {question.kind} {question.reference!r}")
              for question, score in (semantic_scores or {}).items()}
    checks = []
    for position, node in enumerate(key_nodes):
        kind, content, reference = _parse(node, f"key_nodes[{position}]")
        checks.append(_check(position + 1, kind, content, reference, steps, scores, tau))
    if not checks:
        return KeyNodeCompletion(value=None, satisfied=0, total=0, all_satisfied=None, checks=(), tau=tau)
    satisfied = sum(check.satisfied for check in checks)
    return KeyNodeCompletion(value=satisfied / len(checks), satisfied=satisfied, total=len(checks),
                             all_satisfied=satisfied == len(checks), checks=tuple(checks), tau=tau)
