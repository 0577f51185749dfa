"""The metrics of METRICS.md as pure functions: judge answers in, frozen results out.

Nothing here touches Django or calls a judge; evaluation jobs gather the judge's scores,
call these functions and store each result's `to_dict()` with the score.
"""

from .base import DEFAULT_TAU, MetricResult, has_final_answer
from .element_accuracy import ElementAccuracy, ElementMiss, element_accuracy, points_to_resolve
from .final_answer import (
    AnswerQuality,
    PartialSuccess,
    RequirementCheck,
    answer_quality,
    partial_success,
    requirements_needing_judge,
)
from .key_nodes import (
    KeyNodeCheck,
    KeyNodeCompletion,
    SemanticQuestion,
    VisitedStep,
    key_node_completion,
    key_node_questions,
)
from .outcome import OutcomeCategory, outcome_category
from .repetitiveness import POINT_TOLERANCE, ActedStep, Repetitiveness, repetitiveness, same_action
from .step_matching import MatchedPair, Recovery, RecoveryEvent, ScoreMatrix, StepSuccess, recovery, step_success
from .task_success import (
    AnswerCheck,
    AnswerQuestion,
    EvaluatorResult,
    TaskSuccess,
    UrlCheck,
    site_urls_from_start_url,
    task_success,
    task_success_questions,
)

__all__ = [
    "DEFAULT_TAU",
    "POINT_TOLERANCE",
    "ActedStep",
    "AnswerCheck",
    "AnswerQuality",
    "AnswerQuestion",
    "ElementAccuracy",
    "ElementMiss",
    "KeyNodeCheck",
    "KeyNodeCompletion",
    "SemanticQuestion",
    "VisitedStep",
    "EvaluatorResult",
    "MatchedPair",
    "MetricResult",
    "OutcomeCategory",
    "PartialSuccess",
    "Recovery",
    "RecoveryEvent",
    "Repetitiveness",
    "RequirementCheck",
    "ScoreMatrix",
    "StepSuccess",
    "TaskSuccess",
    "UrlCheck",
    "answer_quality",
    "element_accuracy",
    "has_final_answer",
    "key_node_completion",
    "key_node_questions",
    "outcome_category",
    "partial_success",
    "points_to_resolve",
    "recovery",
    "repetitiveness",
    "requirements_needing_judge",
    "same_action",
    "site_urls_from_start_url",
    "step_success",
    "task_success",
    "task_success_questions",
]
