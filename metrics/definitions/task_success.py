"""Task success (METRICS.md section 7): the harness's verdict, else WebArena's own evaluators.

`string_match` and `url_match` follow web-arena-x/webarena `evaluation_harness/evaluators.py`:
- answers are cleaned (stripped, one pair of outer quotes removed, lower-cased) and the
  prediction is cleaned again inside each comparison, exactly as there;
- `must_include` is a substring test, except when the list is one single-character
  reference, which must be a whole word (WebArena tokenizes so that "0" does not match "10");
- each `fuzzy_match` reference is a question for the judge; an empty answer fails it without
  asking;
- a task unachievable by design (`fuzzy_match: "N/A"`) passes on the answer "N/A"; any other
  answer passes only when the judge finds it gives the reason written in `string_note`
  (WebArena lets that verdict replace the running score rather than multiply it; no such task
  has another reference answer, so the two agree);
- `url_match` ("GOLD in PRED") passes when the host and path of one of the ` |OR| `
  reference URLs is contained in the last URL's, and every query parameter of the references
  has one of its reference values in the last URL.
The evaluators' scores multiply, so one failed check fails the task whatever the others
say, and the judge is not asked once that is so. `program_html` inspects the live site's
state: offline it is unknown.

WebArena-Verified tasks (`eval_config["evaluators"]`) have their own evaluators: the structured
answer check of `agent_response` (`AgentResponseEvaluator`), and `NetworkEventEvaluator`
requests, which need the browser's network log: no trajectory format carries one, so a task
with such requirements has unknown success unless its agent response already fails it.
"""

import re
import urllib.parse
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trajectories.formats.webarena_verified import AGENT_RESPONSE, NETWORK_EVENT, agent_response_evaluator

from .agent_response import AgentResponseCheck, agent_response_check
from .base import DEFAULT_TAU, MetricResult, check_score, check_tau

STRING_MATCH = "string_match"
URL_MATCH = "url_match"
PROGRAM_HTML = "program_html"
HARNESS = "harness"
AGENT_RESPONSE_CHECK = "agent_response"
NETWORK_EVENT_CHECK = "network_event"

EXACT_MATCH = "exact_match"
MUST_INCLUDE = "must_include"
FUZZY_MATCH = "fuzzy_match"
UNACHIEVABLE = "unachievable"
UNACHIEVABLE_REASON = "unachievable_reason"

NO_REFERENCE = "the task has no reference answer or URL to check offline"
GOLD_IN_PRED = "GOLD in PRED"
PLACEHOLDER = re.compile(r"__[A-Z][A-Z0-9_]*__")
_OR = " |OR| "
# What NLTK's word_tokenize splits off a word's edges, for the one-character must_include rule.
_EDGE_PUNCTUATION = "\"'`([{<>}]).,;:!?%$#&*"


@dataclass(frozen=True)
class AnswerQuestion:
    """A question for the judge: does the final answer match `reference`, given the task's intent?

    `approach` is `fuzzy_match` (semantically the same answer as the reference) or
    `unachievable_reason` (gives the same reason why the task cannot be done).
    """

    approach: str
    reference: str


@dataclass(frozen=True)
class AnswerCheck:
    """One comparison of string_match; `passed` is None when the judge was not asked because
    another check had already failed the task."""

    approach: str
    reference: str
    passed: bool | None
    judge_score: float | None = None


@dataclass(frozen=True)
class UrlCheck:
    last_url: str
    reference_urls: tuple[str, ...]
    host_and_path_match: bool
    query_match: bool


@dataclass(frozen=True)
class EvaluatorResult:
    evaluator: str
    passed: bool | None
    note: str = ""
    answer_checks: tuple[AnswerCheck, ...] = ()
    url_check: UrlCheck | None = None
    response_check: AgentResponseCheck | None = None


@dataclass(frozen=True)
class TaskSuccess(MetricResult):
    """`source` names what decided: `harness`, the evaluator that failed the task, or the
    evaluators that all passed ("string+url_match" for two); blank when success is unknown."""

    value: bool | None
    source: str
    evaluators: tuple[EvaluatorResult, ...]
    tau: float
    null_reason: str = ""


def _clean(answer: str) -> str:
    answer = answer.strip()
    quote = answer[:1]
    if quote in ("'", '"') and answer.endswith(quote):
        answer = answer[1:-1]
    return answer.lower()


def _words(text: str) -> set[str]:
    return {word.strip(_EDGE_PUNCTUATION) for word in text.split()}


def _must_include(reference: str, prediction: str, tokenize: bool) -> bool:
    reference, prediction = _clean(reference), _clean(prediction)
    if tokenize and len(reference) == 1:
        return reference in _words(prediction)
    return reference in prediction


def _string_list(value, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{where}: expected a list of strings, got {value!r}")
    return value


def _answer_checks(eval_config: Mapping, final_answer: str | None, answer_scores: Mapping[str, float],
                   tau: float) -> list[AnswerCheck]:
    prediction = _clean(final_answer or "")

    def judged(approach: str, reference: str) -> AnswerCheck:
        if reference not in answer_scores:
            return AnswerCheck(approach, reference, passed=None)
        score = answer_scores[reference]
        return AnswerCheck(approach, reference, passed=score >= tau, judge_score=score)

    checks = []
    for approach, value in (eval_config.get("reference_answers") or {}).items():
        where = f"eval.reference_answers.{approach}"
        if approach == EXACT_MATCH:
            if not isinstance(value, str):
                raise ValueError(f"{where}: expected a string, got {value!r}")
            checks.append(AnswerCheck(approach, value, passed=_clean(prediction) == _clean(value)))
        elif approach == MUST_INCLUDE:
            references = _string_list(value, where)
            checks.extend(
                AnswerCheck(approach, reference, passed=_must_include(reference, prediction, len(references) == 1))
                for reference in references
            )
        elif approach == FUZZY_MATCH and value == "N/A":
            if _clean(prediction) == "n/a":
                checks.append(AnswerCheck(UNACHIEVABLE, value, passed=True))
            else:
                checks.append(judged(UNACHIEVABLE_REASON, eval_config.get("string_note") or ""))
        elif approach == FUZZY_MATCH:
            for reference in _string_list(value, where):
                if prediction:
                    checks.append(judged(FUZZY_MATCH, reference))
                else:
                    checks.append(AnswerCheck(FUZZY_MATCH, reference, passed=reference == ""))
        else:
            raise ValueError(f"{where}: unknown reference answer type")
    return checks


def _string_match(eval_config, final_answer, answer_scores, tau) -> EvaluatorResult:
    checks = tuple(_answer_checks(eval_config, final_answer, answer_scores, tau))
    if any(check.passed is False for check in checks):
        passed = False
    elif any(check.passed is None for check in checks):
        passed = None
    else:
        passed = True
    return EvaluatorResult(STRING_MATCH, passed, answer_checks=checks)


def _host_and_path(url: str) -> tuple[str, dict[str, list[str]]]:
    parsed = urllib.parse.urlparse(url)
    return (parsed.netloc + parsed.path).rstrip("/"), urllib.parse.parse_qs(parsed.query)


def site_urls_from_start_url(config_start_url: str, resolved_start_url: str) -> dict[str, str]:
    """The site URL behind a placeholder, read off one start URL written both ways.

    `__SHOPPING_ADMIN__` and `http://host:7780/admin` give
    `{"__SHOPPING_ADMIN__": "http://host:7780/admin"}`; anything that does not line up gives {}.
    """
    placeholder = PLACEHOLDER.match(config_start_url)
    if not placeholder:
        return {}
    rest = config_start_url[placeholder.end():]
    if not resolved_start_url.endswith(rest):
        return {}
    site_url = resolved_start_url[: len(resolved_start_url) - len(rest)].rstrip("/")
    return {placeholder.group(): site_url} if site_url else {}


def _url_match(eval_config: Mapping, last_url: str | None, site_urls: Mapping[str, str]) -> EvaluatorResult:
    rule = eval_config.get("url_note")
    if rule is not None and rule != GOLD_IN_PRED:
        raise ValueError(f"eval.url_note: unknown URL matching rule {rule!r}")
    reference = eval_config.get("reference_url")
    if not isinstance(reference, str) or not reference.strip():
        raise ValueError(f"eval.reference_url: url_match needs a reference URL, got {reference!r}")
    if not last_url:
        return EvaluatorResult(URL_MATCH, None, note="the trajectory has no last URL")
    for placeholder, site_url in site_urls.items():
        reference = reference.replace(placeholder, site_url)
    unresolved = sorted(set(PLACEHOLDER.findall(reference)))
    if unresolved:
        return EvaluatorResult(URL_MATCH, None, note=f"no site URL for {', '.join(unresolved)}")
    reference_urls = tuple(url.rstrip("/") for url in reference.split(_OR))
    host_and_path, query = _host_and_path(last_url.rstrip("/"))
    reference_queries = defaultdict(set)
    host_and_path_match = False
    for url in reference_urls:
        reference_host_and_path, reference_query = _host_and_path(url)
        # A substring test, as in WebArena: the reference path may be a prefix of the last one.
        host_and_path_match |= reference_host_and_path in host_and_path
        for key, values in reference_query.items():
            reference_queries[key].update(values)
    query_match = all(
        any(value in query.get(key, []) for value in values) for key, values in reference_queries.items()
    )
    check = UrlCheck(last_url, reference_urls, host_and_path_match, query_match)
    return EvaluatorResult(URL_MATCH, host_and_path_match and query_match, url_check=check)


def _evaluate(eval_config, final_answer, last_url, site_urls, answer_scores, tau) -> list[EvaluatorResult]:
    eval_types = eval_config.get("eval_types") or []
    if not isinstance(eval_types, Sequence) or isinstance(eval_types, str):
        raise ValueError(f"eval.eval_types: expected a list, got {eval_types!r}")
    results = []
    for eval_type in eval_types:
        if eval_type == STRING_MATCH:
            results.append(_string_match(eval_config, final_answer, answer_scores, tau))
        elif eval_type == URL_MATCH:
            results.append(_url_match(eval_config, last_url, site_urls or {}))
        elif eval_type == PROGRAM_HTML:
            results.append(EvaluatorResult(PROGRAM_HTML, None, note="program_html needs the live site"))
        elif eval_type == AGENT_RESPONSE:
            evaluator = agent_response_evaluator(eval_config)
            if evaluator is None:
                raise ValueError(f"eval.evaluators: no {AGENT_RESPONSE} entry")
            check = agent_response_check(evaluator, final_answer)
            results.append(EvaluatorResult(AGENT_RESPONSE_CHECK, check.passed, note=check.note,
                                           response_check=check))
        elif eval_type == NETWORK_EVENT:
            results.append(EvaluatorResult(
                NETWORK_EVENT_CHECK, None,
                note="the task's NetworkEventEvaluator requests need the browser's network log, which the "
                     "trajectory does not carry",
            ))
        else:
            raise ValueError(f"eval.eval_types: unknown evaluator {eval_type!r}")
    return results


def task_success_questions(
    eval_config: Mapping,
    *,
    final_answer: str | None,
    last_url: str | None = None,
    harness_success: bool | None = None,
    site_urls: Mapping[str, str] | None = None,
) -> tuple[AnswerQuestion, ...]:
    """What the judge must answer before `task_success` can decide; nothing when it is decided already."""
    if harness_success is not None:
        return ()
    results = _evaluate(eval_config, final_answer, last_url, site_urls, {}, DEFAULT_TAU)
    if any(result.passed is False for result in results):
        return ()
    return tuple(
        AnswerQuestion(check.approach, check.reference)
        for result in results
        for check in result.answer_checks
        if check.passed is None
    )


def task_success(
    eval_config: Mapping,
    *,
    final_answer: str | None,
    last_url: str | None = None,
    harness_success: bool | None = None,
    answer_scores: Mapping[str, float] | None = None,
    site_urls: Mapping[str, str] | None = None,
    tau: float = DEFAULT_TAU,
) -> TaskSuccess:
    """Success from the harness when known, else from the task's evaluators (None = unknown).

    `eval_config` is the task's WebArena `eval` object; `last_url` the page's URL when the
    trajectory ended (the last step's URL when it ended with a stop). `answer_scores` maps
    the reference of each question from `task_success_questions` to the judge's score (pass
    at >= tau). `site_urls` resolves the reference URL's placeholders (see
    `site_urls_from_start_url`).
    """
    tau = check_tau(tau)
    if harness_success is not None:
        return TaskSuccess(value=bool(harness_success), source=HARNESS, evaluators=(), tau=tau)
    answer_scores = {
        reference: check_score(score, f"judge score for reference {reference!r}")
        for reference, score in (answer_scores or {}).items()
    }
    results = tuple(_evaluate(eval_config, final_answer, last_url, site_urls, answer_scores, tau))
    failed = [result.evaluator for result in results if result.passed is False]
    if failed:
        return TaskSuccess(value=False, source=failed[0], evaluators=results, tau=tau)
    for result in results:
        for check in result.answer_checks:
            if check.passed is None:
                raise ValueError(f"no judge score for {check.approach} reference {check.reference!r}")
    if not results:
        return TaskSuccess(value=None, source="", evaluators=results, tau=tau, null_reason=NO_REFERENCE)
    undecided = [result for result in results if result.passed is None]
    if undecided:
        reason = "; ".join(result.note or f"{result.evaluator} cannot decide" for result in undecided)
        return TaskSuccess(value=None, source="", evaluators=results, tau=tau,
                           null_reason=f"the offline check cannot decide: {reason}")
    return TaskSuccess(value=True, source=_passed_source([result.evaluator for result in results]),
                       evaluators=results, tau=tau)


def _passed_source(evaluators: list[str]) -> str:
    # "string+url_match" rather than "string_match+url_match": TrajectoryScore keeps 16 characters.
    return "+".join([name.removesuffix("_match") for name in evaluators[:-1]] + evaluators[-1:])
